/// Where a fix lies relative to a fence, taking its accuracy into account.
///
/// The rule: a fix is **inside with confidence** when it is inside by at least its
/// accuracy, capped at half the fence's radius (`distance + min(acc, radius/2) ≤
/// radius`): its whole uncertainty circle is in the fence, or, for a fix coarser than
/// half the fence, at least its centre is in the fence's inner half, so small fences
/// stay enterable with the fixes `maximumAccuracy` lets through. It is **outside with
/// confidence** when it is outside by more than its accuracy plus the hysteresis margin
/// (`distance − acc > radius + hysteresis`). In between it is **uncertain** and the
/// device's state holds. Polygons use the distance to their boundary the same way.
public struct Containment: Sendable, Hashable {
    /// The three answers.
    public enum Relation: Sendable, Hashable {
        case inside
        case outside
        case uncertain
    }

    public var relation: Relation

    @inlinable
    public init(relation: Relation) {
        self.relation = relation
    }
}
