import GeotifyCore
import GeotifyJSON

/// A notification as targets see it: the fields of the JSON the bridge publishes on
/// `geotify/event/<device>` (`OutboundMessages.event`), read back from the queued payload,
/// and that payload itself, which is what a webhook posts.
package struct DeliveryEvent: Sendable, Equatable {
    /// The stable event id: the idempotency key.
    package var id: String
    package var device: String
    package var fence: String
    package var kind: TransitionKind
    /// The fence's note, the app's notification text; may be empty.
    package var note: String
    /// The device's badge including this notification.
    package var badge: Int
    package var latitude: Double
    package var longitude: Double
    /// The fix's accuracy in metres, when it had one.
    package var accuracy: Double?
    /// The fix's time, seconds since 1970.
    package var timestamp: Double
    /// The notification JSON, byte for byte as queued.
    package var payload: [UInt8]

    /// Reads a queued notification; throws when it is not the JSON `OutboundMessages.event`
    /// writes (a damaged row is dead-lettered with this reason, not retried).
    package init(payload: [UInt8]) throws(UnreadableNotification) {
        let json: JSON
        do {
            json = try JSONParser().parse(payload)
        } catch {
            throw UnreadableNotification("the notification is not JSON: \(error.reason)")
        }
        guard case .object(let object) = json else {
            throw UnreadableNotification("the notification must be a JSON object, not \(json.kindDescription)")
        }
        func text(_ key: String) throws(UnreadableNotification) -> String {
            guard let value = object[key]?.stringValue else { throw UnreadableNotification("the notification has no string \"\(key)\"") }
            return value
        }
        func number(_ key: String) throws(UnreadableNotification) -> Double {
            guard let value = object[key]?.numberValue else { throw UnreadableNotification("the notification has no number \"\(key)\"") }
            return value
        }
        id = try text("id")
        device = try text("device")
        fence = try text("fence")
        let event = try text("event")
        guard let kind = TransitionKind(rawValue: event) else {
            throw UnreadableNotification("the notification's event \"\(event)\" is not enter, exit or dwell")
        }
        self.kind = kind
        note = try text("note")
        let badge = try number("badge")
        guard badge >= 0, badge <= 1e9, badge == badge.rounded() else {
            throw UnreadableNotification("the notification's badge must be a whole number from 0")
        }
        self.badge = Int(badge)
        latitude = try number("lat")
        longitude = try number("lon")
        accuracy = object["acc"]?.numberValue
        timestamp = try number("tst")
        self.payload = payload
    }
}
