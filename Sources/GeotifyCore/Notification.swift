/// A transition the fence asked to be told about: what the bridge publishes, with the
/// note and the badge count after it, as the app's local notification.
public struct Notification: Sendable, Equatable {
    public var transition: Transition
    /// The device's badge including this notification.
    public var badge: Int

    public init(transition: Transition, badge: Int) {
        self.transition = transition
        self.badge = badge
    }

    public var device: String { transition.fix.device }
    public var fence: String { transition.fence.identifier }
    public var kind: TransitionKind { transition.kind }
    public var note: String { transition.fence.note }

    /// A stable identifier, unique among the device's notifications, so subscribers can
    /// drop what at-least-once delivery repeats: `<device>/<fence>/<kind>/<fix time>`,
    /// and when the device entered (left, dwelled in) the fence more than once at one
    /// fix time, `~2` for the second, `~3` for the third (`Transition.occurrence`).
    /// Identifiers are single topic levels and a time holds no `/`, so no two of one
    /// device read alike.
    public var eventID: String {
        let id = "\(device)/\(fence)/\(kind.rawValue)/\(Notification.format(transition.fix.timestamp))"
        return transition.occurrence > 1 ? "\(id)~\(transition.occurrence)" : id
    }

    private static func format(_ seconds: Double) -> String {
        if abs(seconds) < 1e15, Double(Int64(seconds)) == seconds { return String(Int64(seconds)) }
        return seconds.description
    }
}
