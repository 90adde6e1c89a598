/// A delivery the queue did not take because its target's `DeliveryBound` was reached:
/// counted and reported (`delivery_queue_full`), never queued. The notification itself
/// was published on MQTT all the same.
package struct DeliveryRefusal: Sendable, Equatable {
    /// The bound that was reached, named as the settings name it.
    package enum Bound: String, Sendable {
        case maximumQueued
        case maximumQueuedPerDevice
    }

    package var entry: DeliveryEntry
    package var bound: Bound
    /// The bound's value.
    package var maximum: Int

    package init(entry: DeliveryEntry, bound: Bound, maximum: Int) {
        self.entry = entry
        self.bound = bound
        self.maximum = maximum
    }

    /// Why it was not queued, for the log and `geotify/error`.
    package var reason: String {
        switch bound {
        case .maximumQueuedPerDevice:
            "\(maximum) notifications of \(entry.device) are already waiting for \(entry.target) (maximumQueuedPerDevice)"
        case .maximumQueued:
            "\(maximum) notifications are already waiting for \(entry.target) (maximumQueued)"
        }
    }
}
