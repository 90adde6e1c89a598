import GeotifyCore

/// Shared fences by a plain linear scan: every fence's `contains` (its box first), then
/// the same bookkeeping. The baseline the index is measured against.
struct ScannedSharedFences: SharedFenceEvaluation {
    let workload: SharedWorkload
    private var presences: [SharedPresence]
    private var found: [UInt32] = []

    init(_ workload: SharedWorkload) {
        self.workload = workload
        presences = Array(repeating: SharedPresence(), count: workload.stream.deviceCount)
    }

    mutating func evaluate(_ number: Int, tally: inout SharedTally) {
        let fix = workload.stream.fix(number)
        var found = self.found
        self.found = []
        found.removeAll(keepingCapacity: true)
        workload.fences.withUnsafeBufferPointer { fences in
            for candidate in fences.indices where fences[candidate].contains(fix.coordinate) {
                found.append(UInt32(candidate))
            }
            found.withUnsafeBufferPointer { now in
                presences[fix.device].update(to: now, fences: fences, fix: number, tally: &tally)
            }
        }
        tally.fixes += 1
        self.found = found
    }
}
