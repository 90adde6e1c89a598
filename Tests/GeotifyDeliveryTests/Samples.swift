import GeotifyBridge
import GeotifyCore
import GeotifyDelivery
import GeotifyStore

/// Notifications and targets the delivery tests share: payloads are made by the bridge's
/// own `OutboundMessages.event`, so the tests read exactly what the bridge queues.
enum Samples {
    static let now: Double = 1_700_000_000

    static func notification(
        device: String = "alice/phone", fence: String = "home", kind: TransitionKind = .enter, note: String = "Welcome home",
        badge: Int = 3, timestamp: Double = 1_700_000_000, accuracy: Double? = 12
    ) -> Notification {
        let fenceValue = Fence(
            identifier: fence, region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100),
            note: note, eventType: [.onEntry, .onExit, .onDwell])
        let fix = Fix(device: device, coordinate: Coordinate(latitude: 52.5201, longitude: 13.4049), accuracy: accuracy, timestamp: timestamp)
        return Notification(transition: Transition(fence: fenceValue, kind: kind, fix: fix), badge: badge)
    }

    static func payload(_ notification: Notification) -> [UInt8] {
        OutboundMessages(topics: Topics()).event(notification).payload
    }

    static func event(_ notification: Notification = notification()) throws -> DeliveryEvent {
        try DeliveryEvent(payload: payload(notification))
    }

    static func entry(target: String, _ notification: Notification = notification()) -> DeliveryEntry {
        DeliveryEntry(target: target, device: notification.device, eventID: notification.eventID, payload: payload(notification))
    }

    static let secret = Secret(value: "whsec_test_5f2b8c", source: "env TEST_SECRET")

    static func webhook(_ name: String = "hook", url: String) -> Target {
        Target(name: name, destination: .webhook(WebhookDestination(url: url, secret: secret)))
    }
}
