/// What a transition is: crossing into a fence, out of it, or having stayed inside for
/// the fence's dwell time.
public enum TransitionKind: String, Sendable, Hashable, CaseIterable {
    case enter
    case exit
    case dwell
}
