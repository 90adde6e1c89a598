/// A device crossing a fence's edge, as decided by one fix.
public struct Transition: Sendable, Equatable {
    public var fence: Fence
    public var kind: TransitionKind
    public var fix: Fix
    /// Which transition of its kind to its fence at its time this is: 1, unless fixes
    /// sharing one time took the device across the fence's edge and back
    /// (`FenceState.repeats`), when the second entry (exit, dwell) at that time is 2.
    /// What keeps notification ids apart (`Notification.eventID`).
    public var occurrence: Int

    public init(fence: Fence, kind: TransitionKind, fix: Fix, occurrence: Int = 1) {
        self.fence = fence
        self.kind = kind
        self.fix = fix
        self.occurrence = occurrence
    }
}
