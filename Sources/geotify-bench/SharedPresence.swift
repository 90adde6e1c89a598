import GeotifyCore

/// What the linear-scan baseline remembers of a device and the shared fences: which it
/// is inside (sorted fence numbers) and its badge; each fix's crossings are the diff of
/// the fences containing it against this.
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
