import GeotifyCore

/// One way of evaluating a fix against the fences all devices share, keeping each
/// device's `SharedPresence`.
///
/// The core rows time two conformances side by side: `IndexedSharedFences` (the
/// `FenceIndex`, then exact checks of its candidates) and `ScannedSharedFences` (every
/// fence, as a plain linear scan). When the evaluator evaluates shared fences itself, a
/// conformance that calls it takes `IndexedSharedFences`' place in `CoreScenario` and
/// the same rows, checks and baseline measure the real thing.
protocol SharedFenceEvaluation: SendableMetatype {
    /// Evaluates fix `number` of the workload's stream for its device.
    mutating func evaluate(_ number: Int, tally: inout SharedTally)
}

/// Shared fences through the spatial index: the candidates whose box contains the fix,
/// the exact containment of each, and the device's bookkeeping.
struct IndexedSharedFences: SharedFenceEvaluation {
    let workload: SharedWorkload
    let index: FenceIndex
    private var presences: [SharedPresence]
    private var found: [UInt32] = []

    init(_ workload: SharedWorkload, index: FenceIndex) {
        self.workload = workload
        self.index = index
        presences = Array(repeating: SharedPresence(), count: workload.stream.deviceCount)
    }

    mutating func evaluate(_ number: Int, tally: inout SharedTally) {
        let fix = workload.stream.fix(number)
        var found = self.found
        self.found = []
        found.removeAll(keepingCapacity: true)
        workload.fences.withUnsafeBufferPointer { fences in
            index.forEachCandidate(containing: fix.coordinate) { candidate in
                tally.candidates += 1
                if fences[candidate].contains(fix.coordinate) { found.append(UInt32(candidate)) }
            }
            found.sort()
            found.withUnsafeBufferPointer { now in
                presences[fix.device].update(to: now, fences: fences, fix: number, tally: &tally)
            }
        }
        tally.fixes += 1
        self.found = found
    }
}

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
            tally.candidates += fences.count
            found.withUnsafeBufferPointer { now in
                presences[fix.device].update(to: now, fences: fences, fix: number, tally: &tally)
            }
        }
        tally.fixes += 1
        self.found = found
    }
}
