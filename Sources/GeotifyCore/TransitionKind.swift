/// The direction of a crossing: into a fence or out of it.
public enum TransitionKind: String, Sendable, Hashable, CaseIterable {
    case enter
    case exit
}
