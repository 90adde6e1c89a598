import GeotifyCore

/// Shared fences as the bridge evaluates them: the real `Evaluator` with each device's
/// `DeviceState` and the fences as a `SharedFences` set (its spatial index, then the
/// exact checks of the candidates). The rules are off (`TransitionRules.none`), so a
/// transition is exactly a change of centre containment, which the linear scan it is
/// compared with can compute.
struct EvaluatedSharedFences: SharedFenceEvaluation {
    let workload: SharedWorkload
    let fences: DeviceFences
    let evaluator = Evaluator(rules: .none, acceptance: FixAcceptance(maximumAge: 0, maximumFutureSkew: .infinity))
    private var states: [DeviceState]

    init(_ workload: SharedWorkload, set: SharedFences) {
        self.workload = workload
        fences = DeviceFences(shared: [set])
        states = Array(repeating: DeviceState(), count: workload.stream.deviceCount)
    }

    mutating func evaluate(_ number: Int, tally: inout SharedTally) {
        let (device, coordinate, accuracy, timestamp) = workload.stream.fix(number)
        let fix = Fix(device: workload.stream.names[device], coordinate: coordinate, accuracy: accuracy, timestamp: timestamp)
        let evaluation = evaluator.evaluate(fix, fences: fences, revision: 0, now: timestamp, state: &states[device])
        tally.fixes += 1
        tally.inside += states[device].fences.count
        tally.transitions += evaluation.transitions.count
        tally.notifications += evaluation.notifications.count
        for transition in evaluation.transitions {
            let position = fences.shared[0].position(of: transition.fence.identifier) ?? 0
            tally.checksum &+= SharedTally.mix(UInt64(number) << 32 | UInt64(position), transition.kind == .enter ? 1 : 2)
        }
    }
}
