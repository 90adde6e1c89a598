import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Builds the messages the bridge publishes, so every payload format lives in one place.
package struct OutboundMessages: Sendable {
    package let topics: Topics

    package init(topics: Topics) {
        self.topics = topics
    }

    /// The notification of a transition on `geotify/event/<device>` (QoS 1, not retained):
    /// `{"id","device","fence","event","event_type","note","badge","lat","lon","acc","tst"}`,
    /// with `acc` only when the fix had one. `event_type` repeats `event` for Home
    /// Assistant's MQTT event entity, which reads that key.
    package func event(_ notification: Notification) -> OutboxMessage {
        let fix = notification.transition.fix
        var object = JSONObjectWriter()
        object.string("id", notification.eventID)
        object.string("device", notification.device)
        object.string("fence", notification.fence)
        object.string("event", notification.kind.rawValue)
        object.string("event_type", notification.kind.rawValue)
        object.string("note", notification.note)
        if let name = notification.transition.fence.name { object.string("name", name) }
        object.number("badge", Double(notification.badge))
        object.number("lat", fix.coordinate.latitude)
        object.number("lon", fix.coordinate.longitude)
        if let accuracy = fix.accuracy { object.number("acc", accuracy) }
        object.number("tst", fix.timestamp)
        return OutboxMessage(topic: topics.event(notification.device), payload: object.bytes(), qos: 1, retain: false)
    }

    /// The badge of `device` as decimal text on `geotify/badge/<device>`: a retained last
    /// value, at QoS 0 (`PresenceMessages.lastValue`).
    package func badge(_ count: Int, of device: String) -> OutboxMessage {
        PresenceMessages.lastValue(topics.badge(device), Array(String(count).utf8))
    }

    /// A reply to a command on `geotify/reply/<device>` (QoS 1, not retained).
    package func reply(_ reply: JSONObject, to device: String) -> OutboxMessage {
        OutboxMessage(topic: topics.reply(device), payload: JSONWriter().bytes(.object(reply)), qos: 1, retain: false)
    }

    /// A refused input on `geotify/error`: `{"error": kind, "message", "topic", "device"}`.
    package func error(_ error: InputError, topic: String?, device: String?) -> OutboxMessage {
        var object = JSONObject()
        object["error"] = .string(error.code.rawValue)
        object["message"] = .string(error.message)
        if let topic { object["topic"] = .string(topic) }
        if let device { object["device"] = .string(device) }
        return OutboxMessage(topic: topics.error, payload: JSONWriter().bytes(.object(object)), qos: 0, retain: false)
    }

    /// A failure of the bridge itself (disk, fence file) on `geotify/error`.
    package func failure(_ code: ErrorCode, _ message: String) -> OutboxMessage {
        let object: JSON = ["error": .string(code.rawValue), "message": .string(message)]
        return OutboxMessage(topic: topics.error, payload: JSONWriter().bytes(object), qos: 0, retain: false)
    }
}
