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
        let (device, coordinate, accuracy, timestamp) = workload.stream.fix(number)
        let fix = Fix(device: workload.stream.names[device], coordinate: coordinate, accuracy: accuracy, timestamp: timestamp)
        let evaluation = evaluator.evaluate(
            fix, fences: workload.deviceFences[device], revision: 0, now: timestamp, state: &states[device])
        transitions += evaluation.transitions.count
        notifications += evaluation.notifications.count
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
