import GeotifyCore

/// Core evaluation, in process, no I/O: per-device fences through the real evaluator,
/// and shared fences through the spatial index, each beside a plain scan, on one core
/// and on two (devices sharded across lanes as the bridge shards them).
struct CoreScenario {
    let options: BenchOptions

    static let devices = 10_000
    static let sharedSizes = [1_000, 100_000, 1_000_000]

    func run() -> [ResultRow] {
        var random = SeededRandom(seed: options.seed)
        var rows = perDeviceRows(&random)
        rows += sharedRows(&random)
        return rows
    }

    // MARK: Per-device fences

    private func perDeviceRows(_ random: inout SeededRandom) -> [ResultRow] {
        Progress.note("core: building \(CoreScenario.devices) devices × 20 fences")
        var generator = random.split()
        let workload = PerDeviceWorkload(devices: CoreScenario.devices, fencesPerDevice: 20, steps: 60, &generator)
        Progress.note("core: per-device evaluation")
        let one = evaluatePerDevice(workload, lanes: 1)
        let two = evaluatePerDevice(workload, lanes: 2)
        let grouped = evaluateDeviceByDevice(workload)
        let floor = Parallel.run(lanes: 1) { _, ready in
            var inside = 0
            let throughput = Throughput.measure(
                seconds: options.budget, chunk: 5_000, clock: BenchClock.threadCPU, warmedUp: ready
            ) { first, count in
                for number in first..<(first + count) { inside &+= DeviceEvaluationRun.containmentOnly(workload, number) }
            }
            return (throughput.items, (throughput: throughput, inside: inside))
        }.values.map(\.throughput).combined
        let perThousand = 1_000 * Double(one.transitions) / Double(max(1, one.throughput.items))
        Progress.note("core: own fences, transitions checksum and circle decisions against the exact distance")
        let check = OwnFencePathCheck(workload, count: OwnFencePathCheck.exactPath.fixes)
        return [
            ResultRow(
                scenario: "core", measure: "10 000 devices × 20 own fences, Evaluator, 1 core",
                value: one.throughput.perSecond, unit: .perSecond,
                baseline: floor.perSecond, baselineName: "20 × Fence.contains, no state",
                target: .atLeast(2_000_000),
                detail: "\(ResultRow.format(one.throughput.nanosecondsPerItem, .nanoseconds))/fix on the thread's CPU clock (\(ResultRow.format(one.wall.perSecond, .perSecond)) on the wall clock); "
                    + "\(ResultRow.decimal(perThousand, 1)) transitions per 1000 fixes; "
                    + "transitions over the first \(check.fixes) fixes: \(check.transitions), checksum \(String(check.checksum, radix: 16)), "
                    + "the exact path's: \(check.matchesExactPath(seed: options.seed).map { $0 ? "yes" : "NO" } ?? "not recorded for this seed"); "
                    + "circle decisions equal to the exact distance over \(check.comparisons) comparisons: \(check.comparisonsExact ? "yes" : "NO")"),
            ResultRow(
                scenario: "core", measure: "10 000 devices × 20 own fences, Evaluator, 1 core, each device's fixes in a row",
                value: grouped.perSecond, unit: .perSecond,
                baseline: one.throughput.perSecond, baselineName: "fixes device after device (the row above)",
                detail: "\(ResultRow.format(grouped.nanosecondsPerItem, .nanoseconds))/fix; the same fixes, \(CoreScenario.fixesInARow) of a device in a row, so its fences and state stay in the cache: the evaluation's own cost, the rest of the row above is waiting for memory"),
            ResultRow(
                scenario: "core", measure: "10 000 devices × 20 own fences, Evaluator, 2 lanes on 2 cores",
                value: two.throughput.perSecond, unit: .perSecond,
                baseline: one.throughput.perSecond, baselineName: "1 core",
                target: .atLeast(2_000_000),
                detail: "\(ResultRow.format(two.throughput.nanosecondsPerItem, .nanoseconds))/fix over the longest lane's CPU time (\(ResultRow.format(two.wall.perSecond, .perSecond)) on the wall clock); scaling \(ResultRow.decimal(two.throughput.perSecond / max(1, one.throughput.perSecond), 2))×"),
        ]
    }

    /// Times the per-device evaluation on `lanes` lanes, each with its own devices and
    /// states: `throughput` on the lanes' CPU clocks (every lane's fixes over the longest
    /// lane's CPU time, as the shared-fence rows), which the machine's other work does not
    /// inflate by the time a lane waited for a core; `wall` from the first lane's start to
    /// the last one's end.
    private func evaluatePerDevice(
        _ workload: PerDeviceWorkload, lanes: Int
    ) -> (throughput: Throughput, wall: Throughput, transitions: Int) {
        let budget = options.budget
        let result = Parallel.run(lanes: lanes) { lane, ready in
            var run = DeviceEvaluationRun(workload)
            let devices = workload.stream.deviceCount
            // Each device's first fix only establishes its state: not timed.
            for number in stride(from: lane, to: devices, by: lanes) { run.evaluate(number) }
            ready()
            let throughput = Throughput.measure(seconds: budget, chunk: 2_000, warmUp: false, clock: BenchClock.threadCPU) { first, count in
                run.evaluate(from: devices + lane + first * lanes, count: count, step: lanes)
            }
            return (throughput.items, (throughput: throughput, transitions: run.transitions))
        }
        return (result.values.map(\.throughput).combined, result.throughput, result.values.map(\.transitions).reduce(0, +))
    }

    /// How many fixes of one device `evaluateDeviceByDevice` evaluates in a row.
    static let fixesInARow = 50

    /// Times the per-device evaluation with each device's fixes `fixesInARow` in a row
    /// (in the order of the stream, so its timestamps keep increasing), on one lane, on the
    /// thread's CPU clock.
    private func evaluateDeviceByDevice(_ workload: PerDeviceWorkload) -> Throughput {
        let budget = options.budget
        return Parallel.run(lanes: 1) { _, ready in
            var run = DeviceEvaluationRun(workload)
            let devices = workload.stream.deviceCount
            let inARow = CoreScenario.fixesInARow
            for number in 0..<devices { run.evaluate(number) }
            ready()
            let throughput = Throughput.measure(seconds: budget, chunk: 2_000, warmUp: false, clock: BenchClock.threadCPU) { first, count in
                for item in first..<(first + count) {
                    let (round, within) = item.quotientAndRemainder(dividingBy: devices * inARow)
                    let (device, step) = within.quotientAndRemainder(dividingBy: inARow)
                    run.evaluate((1 + round * inARow + step) * devices + device)
                }
            }
            return (throughput.items, throughput)
        }.values.map(\.self).combined
    }

    // MARK: Shared fences

    private func sharedRows(_ random: inout SeededRandom) -> [ResultRow] {
        var rows: [ResultRow] = []
        var costs: [Int: Double] = [:]
        for size in CoreScenario.sharedSizes {
            var generator = random.split()
            Progress.note("core: building \(size) shared fences and \(CoreScenario.devices) devices")
            let workload = SharedWorkload(fences: size, devices: CoreScenario.devices, steps: 30, &generator)
            let buildStart = BenchClock.now()
            let set = SharedFences(owner: "shared", fences: workload.fences)
            let buildSeconds = BenchClock.now() - buildStart
            Progress.note("core: \(size) shared fences, evaluated (index built in \(ResultRow.decimal(buildSeconds, 2)) s)")
            let indexed = evaluateShared(lanes: 1, chunk: 2_000) { EvaluatedSharedFences(workload, set: set) }
            Progress.note("core: \(size) shared fences, linear scan")
            let chunk = max(1, 2_000_000 / size)
            let scanned = evaluateShared(lanes: 1, chunk: chunk, minimum: 20) { ScannedSharedFences(workload) }
            // The scan's transitions, fix for fix, must be the index's.
            var check = EvaluatedSharedFences(workload, set: set)
            var checkTally = SharedTally()
            for number in 0..<scanned.tally.fixes { check.evaluate(number, tally: &checkTally) }
            let identical = checkTally.checksum == scanned.tally.checksum && checkTally.transitions == scanned.tally.transitions
            let fixes = Double(max(1, indexed.tally.fixes))
            costs[size] = indexed.throughput.nanosecondsPerItem
            rows.append(ResultRow(
                scenario: "core",
                measure: "\(ResultRow.count(size)) shared fences (¼ polygons), Evaluator + FenceIndex, 1 core",
                value: indexed.throughput.nanosecondsPerItem, unit: .nanoseconds,
                baseline: scanned.throughput.nanosecondsPerItem, baselineName: "linear scan",
                detail: "\(ResultRow.format(indexed.throughput.perSecond, .perSecond)); \(ResultRow.decimal(Double(indexed.tally.inside) / fixes, 1)) fences inside per fix; transitions identical to the scan over \(scanned.tally.fixes) fixes: \(identical ? "yes" : "NO"); index built in \(ResultRow.format(buildSeconds, .seconds)); both timed on the thread's CPU clock"))
            if size == CoreScenario.sharedSizes.last {
                let two = evaluateShared(lanes: 2, chunk: 2_000) { EvaluatedSharedFences(workload, set: set) }
                rows.append(ResultRow(
                    scenario: "core", measure: "\(ResultRow.count(size)) shared fences, Evaluator + FenceIndex, 2 lanes on 2 cores",
                    value: two.throughput.perSecond, unit: .perSecond,
                    baseline: indexed.throughput.perSecond, baselineName: "1 core",
                    detail: "scaling \(ResultRow.decimal(two.throughput.perSecond / max(1, indexed.throughput.perSecond), 2))×; fixes over the longest lane's CPU time"))
            }
        }
        if let smallest = CoreScenario.sharedSizes.first.flatMap({ costs[$0] }),
           let largest = CoreScenario.sharedSizes.last.flatMap({ costs[$0] }), smallest > 0 {
            rows.append(ResultRow(
                scenario: "core",
                measure: "cost per fix, \(ResultRow.count(CoreScenario.sharedSizes.last!)) vs \(ResultRow.count(CoreScenario.sharedSizes.first!)) shared fences",
                value: largest / smallest, unit: .factor, target: .atMost(3),
                detail: "growth of ns/fix with the index"))
        }
        return rows
    }

    /// Times `make()`'s evaluation of the shared-fence stream on `lanes` lanes, each
    /// lane with its own devices and state, on each lane's CPU clock: the cost of a fix,
    /// which the other work on a shared machine would otherwise inflate by whenever a
    /// lane waited for a core. Several lanes' rate is their fixes over the longest
    /// lane's time, as if each had a core of its own (they still share the caches).
    private func evaluateShared<Evaluation: SharedFenceEvaluation>(
        lanes: Int, chunk: Int, minimum: Int = 1, _ make: @escaping @Sendable () -> Evaluation
    ) -> (throughput: Throughput, tally: SharedTally) {
        let budget = options.budget
        let result = Parallel.run(lanes: lanes) { lane, ready in
            var evaluation = make()
            var tally = SharedTally()
            let throughput = Throughput.measure(
                seconds: budget, chunk: chunk, minimum: minimum, clock: BenchClock.threadCPU, warmedUp: ready
            ) { first, count in
                for step in first..<(first + count) { evaluation.evaluate(lane + step * lanes, tally: &tally) }
            }
            return (throughput.items, (throughput: throughput, tally: tally))
        }
        return (result.values.map(\.throughput).combined, result.values.map(\.tally).reduce(SharedTally(), +))
    }
}
