import GeotifyCore

/// The check that the evaluator's path for a device's own fences decides exactly as the
/// exact path it replaced, over the per-device workload:
///
/// - every transition and notification of the first fixes of the stream goes into a
///   checksum (fix number, fence, kind, the fix it carries, badge), compared with the one
///   the evaluator gave before the fast path (`exactPath`, recorded from commit 76f43f3,
///   whose circles compared thresholds with the spherical distance and its bound, then
///   the exact distance);
/// - for every circle whose box holds a fix, `CircleDistance.isAtMost` at the thresholds
///   the rules compare with (radius, radius minus the accuracy margin, radius plus
///   hysteresis and accuracy) must answer as `Geodesy.distance` compared directly does.
struct OwnFencePathCheck {
    /// The recorded checksum: the seed and number of fixes it is for, and its value.
    static let exactPath = (seed: UInt64(6), fixes: 200_000, transitions: 8_796, checksum: UInt64(0xA4D0_43B7_74C5_AA5A))

    /// How many fixes were evaluated.
    private(set) var fixes = 0
    /// How many transitions they gave.
    private(set) var transitions = 0
    /// The checksum of those transitions and their notifications.
    private(set) var checksum: UInt64 = 0xCBF2_9CE4_8422_2325
    /// How many threshold comparisons were checked against the exact distance.
    private(set) var comparisons = 0
    /// Whether every comparison agreed with the exact distance.
    private(set) var comparisonsExact = true

    /// Checks the first `count` fixes of `workload`'s stream.
    init(_ workload: PerDeviceWorkload, count: Int) {
        let evaluator = Evaluator()
        var states = Array(repeating: DeviceState(), count: workload.stream.deviceCount)
        for number in 0..<count {
            let (device, coordinate, accuracy, timestamp) = workload.stream.fix(number)
            let fix = Fix(device: workload.stream.names[device], coordinate: coordinate, accuracy: accuracy, timestamp: timestamp)
            let evaluation = evaluator.evaluate(
                fix, fences: workload.deviceFences[device], revision: 0, now: timestamp, state: &states[device])
            fixes += 1
            transitions += evaluation.transitions.count
            for transition in evaluation.transitions {
                mix(UInt64(number))
                mix(StableHash.fnv1a(transition.fence.identifier))
                mix(StableHash.fnv1a(transition.kind.rawValue))
                mix(transition.fix.timestamp.bitPattern)
                mix(transition.fix.coordinate.latitude.bitPattern)
                mix(transition.fix.coordinate.longitude.bitPattern)
            }
            for notification in evaluation.notifications { mix(UInt64(notification.badge)) }
            for fence in workload.fences[device] where fence.boundingBox.contains(coordinate) {
                guard case .circle(let center, let radius) = fence.region else { continue }
                let thresholds = [
                    radius, radius - min(accuracy, radius / 2),
                    radius + evaluator.rules.hysteresis(forSize: radius) + accuracy,
                ]
                let exact = Geodesy.distance(center, coordinate)
                var distance = CircleDistance(center, coordinate)
                for threshold in thresholds {
                    comparisons += 1
                    if distance.isAtMost(threshold) != (exact <= threshold) { comparisonsExact = false }
                }
            }
        }
    }

    /// Whether the transitions are the recorded exact path's (nil when this run's seed or
    /// length has no recorded checksum).
    func matchesExactPath(seed: UInt64) -> Bool? {
        guard seed == OwnFencePathCheck.exactPath.seed, fixes == OwnFencePathCheck.exactPath.fixes else { return nil }
        return checksum == OwnFencePathCheck.exactPath.checksum && transitions == OwnFencePathCheck.exactPath.transitions
    }

    private mutating func mix(_ value: UInt64) {
        checksum = (checksum ^ value) &* 0x0000_0100_0000_01B3
    }
}
