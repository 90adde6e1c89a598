/// A notification to deliver to one target, as the lane decides it: committed in the same
/// transaction as the device state that caused it (`DeliveryLog.enqueue`), so a crash can
/// neither lose it nor queue it without the state.
package struct DeliveryEntry: Sendable, Equatable {
    /// The target's name from the settings.
    package var target: String
    /// The device the notification is about; deliveries of one device to one target go
    /// out in the order they were queued.
    package var device: String
    /// The notification's stable id, sent as the idempotency key on every attempt.
    package var eventID: String
    /// The notification JSON (`OutboundMessages.event`), what the target's message is made from.
    package var payload: [UInt8]

    package init(target: String, device: String, eventID: String, payload: [UInt8]) {
        self.target = target
        self.device = device
        self.eventID = eventID
        self.payload = payload
    }
}
