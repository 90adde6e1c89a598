import GeotifyCore

/// What a device remembers about the shared fences: which it is inside (sorted fence
/// numbers) and its badge. The bookkeeping the evaluator will do per fix for shared
/// fences (diff the fences containing the fix against this, count transitions and
/// notifications) is timed here on top of finding those fences.
struct SharedPresence: Sendable {
    var inside: [UInt32] = []
    var badge = 0
    var seen = false

    /// Replaces the inside set with `now` (sorted) and tallies the crossings between
    /// them. The first fix only establishes the relation, as the evaluator does.
    mutating func update(
        to now: UnsafeBufferPointer<UInt32>, fences: UnsafeBufferPointer<Fence>, fix: Int, tally: inout SharedTally
    ) {
        tally.inside += now.count
        if seen {
            var old = 0
            var new = 0
            while old < inside.count || new < now.count {
                if new == now.count || (old < inside.count && inside[old] < now[new]) {
                    record(.exit, fence: inside[old], fences: fences, fix: fix, tally: &tally)
                    old += 1
                } else if old == inside.count || now[new] < inside[old] {
                    record(.enter, fence: now[new], fences: fences, fix: fix, tally: &tally)
                    new += 1
                } else {
                    old += 1
                    new += 1
                }
            }
        }
        seen = true
        inside.removeAll(keepingCapacity: true)
        inside.append(contentsOf: now)
    }

    private mutating func record(
        _ kind: TransitionKind, fence: UInt32, fences: UnsafeBufferPointer<Fence>, fix: Int, tally: inout SharedTally
    ) {
        tally.transitions += 1
        tally.checksum &+= SharedTally.mix(UInt64(fix) << 32 | UInt64(fence), kind == .enter ? 1 : 2)
        if fences[Int(fence)].eventType.notifies(kind) {
            badge += 1
            tally.notifications += 1
        }
    }
}

/// Totals over many fixes evaluated against shared fences, and an order-independent
/// checksum of every transition (fix, fence, direction), so two ways of evaluating can
/// be shown to produce exactly the same transitions.
struct SharedTally: Sendable {
    var fixes = 0
    var candidates = 0
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
            fixes: lhs.fixes + rhs.fixes, candidates: lhs.candidates + rhs.candidates, inside: lhs.inside + rhs.inside,
            transitions: lhs.transitions + rhs.transitions, notifications: lhs.notifications + rhs.notifications,
            checksum: lhs.checksum &+ rhs.checksum)
    }
}
