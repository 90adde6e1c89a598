/// Totals over many fixes evaluated against shared fences, and an order-independent
/// checksum of every transition (fix, fence, direction), so two ways of evaluating can
/// be shown to produce exactly the same transitions.
struct SharedTally: Sendable {
    var fixes = 0
    var inside = 0
    var transitions = 0
    var notifications = 0
    var checksum: UInt64 = 0

    static func mix(_ value: UInt64, _ salt: UInt64) -> UInt64 {
        var z = value &+ salt &* 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    static func + (lhs: SharedTally, rhs: SharedTally) -> SharedTally {
        SharedTally(
            fixes: lhs.fixes + rhs.fixes, inside: lhs.inside + rhs.inside,
            transitions: lhs.transitions + rhs.transitions, notifications: lhs.notifications + rhs.notifications,
            checksum: lhs.checksum &+ rhs.checksum)
    }
}
