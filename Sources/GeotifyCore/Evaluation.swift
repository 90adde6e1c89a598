/// The outcome of evaluating one fix: every transition it caused, and the ones that
/// notify (with their badge counts).
public struct Evaluation: Sendable, Equatable {
    /// All crossings, notifying or not, in the order of the device's fences.
    public var transitions: [Transition]
    /// The crossings whose fence's `eventType` asks for them.
    public var notifications: [Notification]

    public init(transitions: [Transition] = [], notifications: [Notification] = []) {
        self.transitions = transitions
        self.notifications = notifications
    }
}
