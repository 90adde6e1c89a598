import GeotifyCore
import GeotifyStore

/// Which targets a notification goes to: for the lane, which queues the result in the
/// transaction that commits the state that caused the notification.
package struct DeliveryRouting: Sendable {
    package let targets: [Target]

    package init(targets: [Target]) {
        self.targets = targets
    }

    /// One queue entry per target whose filter lets `notification` through; `payload` is
    /// the notification JSON the bridge publishes (`OutboundMessages.event(_:).payload`).
    package func entries(for notification: Notification, payload: [UInt8]) -> [DeliveryEntry] {
        targets.filter { $0.filter.matches(device: notification.device, fence: notification.fence, kind: notification.kind) }
            .map { DeliveryEntry(target: $0.name, device: notification.device, eventID: notification.eventID, payload: payload) }
    }
}
