import GeotifyBridge
import GeotifyCore
import GeotifyStore

/// What a bridge with default rules must report for a workload, worked out in process by
/// the same pure parts a lane runs: the fence file through `FenceFile` (revisions as a
/// fresh state directory gives them), each payload through `LocationDecoder`, each fix
/// through the `Evaluator` with the device's `DeviceState`. The side-by-side scenario
/// compares the bridge's counters with these, so a run that lost or doubled work cannot
/// pass for a fast one.
struct BridgeExpectation: Sendable {
    var fixes = 0
    var transitions = 0
    var notifications = 0

    /// Evaluates every message of `workload` as a fresh bridge would; `now` is the clock
    /// the fixes are judged against (their age).
    init(_ workload: SideBySideWorkload, now: Double) throws {
        let loaded = FenceFile(path: "side-by-side fences", limits: workload.limits)
            .parse(Array(workload.fenceFile.utf8))
        guard let parsed = loaded.book else {
            throw BenchError("the generated fence file does not validate: \(loaded.errors.map(\.description).joined(separator: "; "))")
        }
        let book = parsed.revised(knownRevisions: [:], currentRevision: 0)
        let decoder = LocationDecoder()
        let evaluator = Evaluator()
        var states: [String: DeviceState] = [:]
        for number in 0..<workload.traffic.count {
            let (topic, payload) = workload.traffic.message(number)
            let device = String(topic.dropFirst("owntracks/".count))
            guard let fix = try decoder.decode(payload, device: device, format: .ownTracks, arrival: now) else { continue }
            var state = states[device] ?? DeviceState()
            let evaluation = evaluator.evaluate(fix, fences: book.deviceFences(of: device), revision: book.revision, now: now, state: &state)
            states[device] = state
            fixes += 1
            transitions += evaluation.transitions.count
            notifications += evaluation.notifications.count
        }
    }
}
