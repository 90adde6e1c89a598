import GeotifyCore

/// Per-device evaluation as a lane runs it: the real `Evaluator` over each device's own
/// fences, with each device's `DeviceState`.
struct DeviceEvaluationRun {
    let workload: PerDeviceWorkload
    let evaluator = Evaluator()
    private var states: [DeviceState]
    private(set) var transitions = 0
    private(set) var notifications = 0

    init(_ workload: PerDeviceWorkload) {
        self.workload = workload
        states = Array(repeating: DeviceState(), count: workload.stream.deviceCount)
    }

    /// Evaluates fix `number` of the stream for its device.
    mutating func evaluate(_ number: Int) {
        evaluate(workload.stream.fix(number))
    }

    /// Evaluates `fix` (as `FixStream.fix` gives it) for its device.
    @inline(__always)
    private mutating func evaluate(_ fix: (device: Int, coordinate: Coordinate, accuracy: Double, timestamp: Double)) {
        let (device, coordinate, accuracy, timestamp) = fix
        let fix = Fix(device: workload.stream.names[device], coordinate: coordinate, accuracy: accuracy, timestamp: timestamp)
        let evaluation = evaluator.evaluate(
            fix, fences: workload.deviceFences[device], revision: 0, now: timestamp, state: &states[device])
        transitions += evaluation.transitions.count
        notifications += evaluation.notifications.count
    }

    /// Evaluates `count` fixes from `first`, `step` apart, as a lane evaluates a batch:
    /// taken from the stream first (a lane decodes its batch first), then evaluated in
    /// order with the lines each will read asked for a few fixes ahead
    /// (`EvaluationLookahead`).
    mutating func evaluate(from first: Int, count: Int, step: Int) {
        let stream = workload.stream
        let fixes = (0..<count).map { stream.fix(first + $0 * step) }
        let deviceFences = workload.deviceFences
        for index in 0..<count {
            let ahead = EvaluationLookahead.fixes(before: index, count: count)
            for next in ahead.objects {
                let device = fixes[next].device
                EvaluationLookahead.objects(Unmanaged.passUnretained(deviceFences[device]))
                states.withUnsafeBufferPointer { states in
                    EvaluationLookahead.place(UnsafeRawPointer(states.baseAddress.map { $0 + device }), byteCount: MemoryLayout<DeviceState>.stride)
                }
            }
            for next in ahead.tables {
                let device = fixes[next].device
                EvaluationLookahead.tables(
                    Unmanaged.passUnretained(deviceFences[device]),
                    entries: states[device].fences.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) })
            }
            evaluate(fixes[index])
        }
    }

    /// The floor under any per-device evaluator: whether fix `number` is in each of its
    /// device's fences (`Fence.contains`, box first), with no state. Returns how many.
    static func containmentOnly(_ workload: PerDeviceWorkload, _ number: Int) -> Int {
        let (device, coordinate, _, _) = workload.stream.fix(number)
        var inside = 0
        for fence in workload.fences[device] where fence.contains(coordinate) {
            inside += 1
        }
        return inside
    }
}
