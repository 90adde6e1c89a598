/// A device crossing a fence's edge, as decided by one fix.
public struct Transition: Sendable, Equatable {
    public var fence: Fence
    public var kind: TransitionKind
    public var fix: Fix

    public init(fence: Fence, kind: TransitionKind, fix: Fix) {
        self.fence = fence
        self.kind = kind
        self.fix = fix
    }
}
