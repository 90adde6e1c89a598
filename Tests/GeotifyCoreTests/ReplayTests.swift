import Testing
import GeotifyCore
import GeotifyTestSupport

/// A recorded-style track replayed through the evaluator: with the rules it yields the
/// transitions that really happened; without them, the flapping they prevent.
@Suite("Replay of a recorded track")
struct ReplayTests {
    func replay(_ rules: TransitionRules) -> [String] {
        let fence = Fence(
            identifier: "home",
            region: .circle(center: Coordinate(latitude: RecordedTrack.center.latitude, longitude: RecordedTrack.center.longitude), radius: RecordedTrack.radius),
            note: "", eventType: [.onEntry, .onExit], addedRevision: 1)
        let evaluator = Evaluator(rules: rules, acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        var transitions: [String] = []
        for point in RecordedTrack().points {
            let fix = Fix(device: "alice/phone", coordinate: Coordinate(latitude: point.latitude, longitude: point.longitude),
                          accuracy: point.accuracy, timestamp: point.timestamp)
            let evaluation = evaluator.evaluate(fix, fences: [fence], revision: 1, now: point.timestamp, state: &state)
            transitions += evaluation.transitions.map { "\($0.kind.rawValue)@\(Int($0.fix.timestamp) - 1_700_000_000)" }
        }
        return transitions
    }

    @Test func withTheRulesOnlyTheRealWalkOutAndBackIsSeen() {
        // The walk crosses the edge (100 m) between 3570 s and 3600 s on the way out and
        // between 4740 s and 4770 s on the way back; the rules see each crossing once,
        // when a fix is beyond the margin with confidence.
        #expect(replay(TransitionRules()) == ["exit@3630", "enter@4800"])
    }

    @Test func withoutTheRulesTheTrackFlaps() {
        let flapping = replay(.none)
        #expect(flapping.count == 51)
        #expect(flapping.suffix(2) == ["exit@3600", "enter@4770"])
    }
}
