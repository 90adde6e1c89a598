import Testing
import GeotifyCore
import GeotifyTestSupport

/// `Evaluation.changedFences`, which tells a caller that persists states whether a
/// restart needs the device's new fence entries: it is never false when they changed
/// (the change would be lost at a restart), and it is false for a fix that leaves them
/// as they were, the common case, in which the lane saves nothing.
@Suite("Evaluator: changed fence entries")
struct EvaluatorChangeTests {
    static let center = Coordinate(latitude: 52.52, longitude: 13.405)
    static let metresPerDegree = 111_250.0

    /// A point `metres` north of the centre.
    static func north(_ metres: Double) -> Coordinate {
        Coordinate(latitude: center.latitude + metres / metresPerDegree, longitude: center.longitude)
    }

    static func circle(_ identifier: String, north metres: Double, radius: Double = 100, rules: FenceRules = FenceRules(), revision: Int = 1) -> Fence {
        Fence(
            identifier: identifier, region: .circle(center: north(metres), radius: radius), note: "",
            eventType: [.onEntry, .onExit, .onDwell], rules: rules, addedRevision: revision)
    }

    static func fix(_ metres: Double, at time: Double, accuracy: Double? = 5) -> Fix {
        Fix(device: "alice/phone", coordinate: north(metres), accuracy: accuracy, timestamp: time)
    }

    /// Inside a fence whose dwell time makes the evaluator look at its timers on every
    /// fix (and put each entry back), and far from another: a fix that stays is no change.
    @Test func aFixThatConfirmsTheRelationIsNoChange() {
        let evaluator = Evaluator(acceptance: FixAcceptance(maximumAge: 0))
        let fences = [Self.circle("home", north: 0, rules: FenceRules(dwell: 600)), Self.circle("shop", north: 5_000)]
        var state = DeviceState()
        let first = evaluator.evaluate(Self.fix(0, at: 0), fences: fences, revision: 1, now: 0, state: &state)
        #expect(first.changedFences, "the first fix establishes the relation to home")
        let before = state.fences
        let stay = evaluator.evaluate(Self.fix(10, at: 10), fences: fences, revision: 1, now: 10, state: &state)
        #expect(!stay.changedFences)
        #expect(state.fences == before)
        let timers = evaluator.advance(to: 20, fences: fences, state: &state)
        #expect(!timers.changedFences, "no timer was due")
        let dwelled = evaluator.advance(to: 600, fences: fences, state: &state)
        #expect(dwelled.transitions.map(\.kind) == [.dwell] && dwelled.changedFences)
        let left = evaluator.evaluate(Self.fix(1_000, at: 700), fences: fences, revision: 1, now: 700, state: &state)
        #expect(left.transitions.map(\.kind) == [.exit] && left.changedFences)
    }

    /// A change waiting for its minimum duration is a change, and so is its drop.
    @Test func aPendingChangeAndItsDropAreChanges() {
        let evaluator = Evaluator(rules: TransitionRules(minimumDuration: 60), acceptance: FixAcceptance(maximumAge: 0))
        let fences = [Self.circle("home", north: 0)]
        var state = DeviceState()
        _ = evaluator.evaluate(Self.fix(0, at: 0), fences: fences, revision: 1, now: 0, state: &state)
        let out = evaluator.evaluate(Self.fix(1_000, at: 10), fences: fences, revision: 1, now: 10, state: &state)
        #expect(out.transitions.isEmpty && out.changedFences, "the exit is pending")
        let back = evaluator.evaluate(Self.fix(0, at: 20), fences: fences, revision: 1, now: 20, state: &state)
        #expect(back.transitions.isEmpty && back.changedFences, "the pending exit is dropped")
        let stay = evaluator.evaluate(Self.fix(0, at: 30), fences: fences, revision: 1, now: 30, state: &state)
        #expect(!stay.changedFences)
    }

    /// Random walks over fences with every rule that keeps an entry (minimum duration,
    /// dwell, hysteresis, coarse fixes that leave a relation undecided), timers advanced
    /// between fixes, and fences removed and added by new revisions: whenever the entries
    /// differ from before, the evaluation says so; and most steps change nothing, so a
    /// flag set on every step would fail the count.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func neverUnsaidWhenTheEntriesChanged(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let evaluator = Evaluator(rules: TransitionRules(hysteresis: 20), acceptance: FixAcceptance(maximumAge: 0))
        let books: [[Fence]] = [
            [
                Self.circle("home", north: 0, rules: FenceRules(dwell: 120)),
                Self.circle("shop", north: 300, radius: 150, rules: FenceRules(minimumDuration: 45)),
                Self.circle("work", north: 900, radius: 200),
            ],
            [
                Self.circle("home", north: 0, rules: FenceRules(dwell: 120)),
                Self.circle("park", north: 600, radius: 250, revision: 2),
            ],
        ]
        var book = 0
        var state = DeviceState()
        var time = 0.0
        var unchanged = 0
        var changed = 0
        for step in 0..<2_000 {
            if step % 400 == 399 { book = 1 - book }
            let fences = books[book]
            time += Double(Int(random.next() % 40) + 1)
            let before = state.fences
            let evaluation: Evaluation
            if random.next() % 5 == 0 {
                evaluation = evaluator.advance(to: time, fences: fences, state: &state)
            } else {
                // A walk along the line of the fences, mostly small steps, sometimes a jump.
                let metres = random.next() % 10 == 0 ? random.unit() * 1_400 - 200 : (state.lastFix.map {
                    ($0.coordinate.latitude - Self.center.latitude) * Self.metresPerDegree
                } ?? 0) + random.unit() * 60 - 30
                let accuracy: Double? = [nil, 5, 40, 120, 900][Int(random.next() % 5)]
                evaluation = evaluator.evaluate(
                    Self.fix(metres, at: time, accuracy: accuracy), fences: fences, revision: book + 1, now: time, state: &state)
            }
            if state.fences != before {
                #expect(evaluation.changedFences, "step \(step): \(before) became \(state.fences)")
                changed += 1
            } else if !evaluation.changedFences {
                unchanged += 1
            }
        }
        #expect(changed > 100, "the walk changes entries (\(changed) steps)")
        #expect(unchanged > 1_500, "most steps change nothing, and say so (\(unchanged) steps)")
    }
}
