/// Decides what a fix means for a device: which fences it crossed and which of those
/// crossings notify. A pure function of (state, fix, fences, revision); no I/O.
///
/// The first fix of a device, and the first fix after a fence was added, only
/// establishes the device's relation to the fence, as iOS does when it starts
/// monitoring a region the device is already in. After that, each change of
/// relation is a transition.
public struct Evaluator: Sendable {
    public init() {}

    /// Evaluates `fix` against `fences` (the device's fences at book `revision`),
    /// updating `state` and returning the transitions and notifications.
    public func evaluate(_ fix: Fix, fences: [Fence], revision: Int, state: inout DeviceState) -> Evaluation {
        var evaluation = Evaluation()
        var inside: [FenceState] = []
        inside.reserveCapacity(state.inside.count + 1)
        for fence in fences {
            let isInside = fence.contains(fix.coordinate)
            let seen = state.hasSeen(fence)
            let previous = seen ? state.inside.first { $0.fence == fence.identifier } : nil
            if isInside {
                inside.append(previous ?? FenceState(fence: fence.identifier, since: fix.timestamp))
            }
            guard seen, isInside != (previous != nil) else { continue }
            let transition = Transition(fence: fence, kind: isInside ? .enter : .exit, fix: fix)
            evaluation.transitions.append(transition)
            if fence.eventType.notifies(transition.kind) {
                state.badge += 1
                evaluation.notifications.append(Notification(transition: transition, badge: state.badge))
            }
        }
        inside.sort { $0.fence < $1.fence }
        state.inside = inside
        state.lastFix = fix
        state.revision = revision
        return evaluation
    }
}
