import Foundation
import Testing
import GeotifyCore

/// Each transition rule, with a case that fails when the rule is taken away.
@Suite("Evaluator rules")
struct EvaluatorRulesTests {
    static let center = Coordinate(latitude: 52.52, longitude: 13.405)
    static let metresPerDegree = 111_250.0

    /// A point `metres` north of the fence centre.
    func north(_ metres: Double) -> Coordinate {
        Coordinate(latitude: Self.center.latitude + metres / Self.metresPerDegree, longitude: Self.center.longitude)
    }

    func fence(_ eventType: EventType = [.onEntry, .onExit], rules: FenceRules = FenceRules(), radius: Double = 100) -> Fence {
        Fence(identifier: "home", region: .circle(center: Self.center, radius: radius), note: "", eventType: eventType, rules: rules, addedRevision: 1)
    }

    /// Runs `steps` (metres north of the centre, accuracy, time) through an evaluator,
    /// the first fix establishing the state; returns every transition's kind and time.
    func run(fence: Fence? = nil, _ steps: [(Double, Double?, Double)]) -> [String] {
        run(TransitionRules(), fence: fence, steps)
    }

    /// `fences` as a device's own, or (`shared`) as a shared set every device has.
    func deviceFences(_ fences: [Fence], shared: Bool) -> DeviceFences {
        shared ? DeviceFences(shared: [SharedFences(owner: "everyone", fences: fences)]) : DeviceFences(own: fences)
    }

    /// `shared`: the fence is the device's as one of a shared set rather than its own.
    func run(_ rules: TransitionRules, fence: Fence? = nil, shared: Bool = false, _ steps: [(Double, Double?, Double)]) -> [String] {
        let evaluator = Evaluator(rules: rules, acceptance: FixAcceptance(maximumAge: 0))
        let fence = fence ?? self.fence()
        let fences = deviceFences([fence], shared: shared)
        var state = DeviceState()
        var seen: [String] = []
        for (metres, accuracy, time) in steps {
            let fix = Fix(device: "d", coordinate: north(metres), accuracy: accuracy, timestamp: time)
            let evaluation = evaluator.evaluate(fix, fences: fences, revision: 1, now: time, state: &state)
            seen += evaluation.transitions.map { "\($0.kind.rawValue)@\(Int($0.fix.timestamp))" }
        }
        return seen
    }

    // MARK: accuracy

    @Test func aFixWorseThanTheAccuracyThresholdDecidesNothing() {
        #expect(run([(500, 5, 0), (0, 3_000, 10)]) == [])
        #expect(run(TransitionRules(maximumAccuracy: 0), [(500, 5, 0), (0, 3_000, 10)]) == ["enter@10"], "0 turns the check off")
    }

    @Test func aFixExactlyAsAccurateAsTheThresholdDecides() {
        let rules = TransitionRules(maximumAccuracy: 50)
        #expect(run(rules, [(500, 5, 0), (0, 50, 10)]) == ["enter@10"])
        #expect(run(rules, [(500, 5, 0), (0, 50.5, 10)]) == [])
        #expect(rules.accepts(accuracy: 50) && !rules.accepts(accuracy: 50.5))
    }

    @Test func anInaccurateFixStillCountsAsTheLastFix() {
        let evaluator = Evaluator(acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        let fix = Fix(device: "d", coordinate: north(0), accuracy: 3_000, timestamp: 5)
        let evaluation = evaluator.evaluate(fix, fences: [fence()], revision: 1, now: 5, state: &state)
        #expect(evaluation.outcome == .inaccurate)
        #expect(state.lastFix == fix)
        #expect(state.revision == nil, "an inaccurate first fix establishes nothing")
    }

    @Test func aFixWithoutAccuracyCountsAsAccurate() {
        #expect(run([(500, nil, 0), (0, nil, 10)]) == ["enter@10"])
    }

    // MARK: containment and hysteresis

    @Test func enteringNeedsTheAccuracyCircleInside() {
        #expect(run([(500, 5, 0), (80, 30, 10)]) == [], "80 + 30 > 100: not inside with confidence")
        #expect(run([(500, 5, 0), (80, 30, 10), (80, 10, 20)]) == ["enter@20"])
        #expect(run(TransitionRules(accuracyAware: false), [(500, 5, 0), (80, 30, 10)]) == ["enter@10"])
    }

    @Test func coarseFixesStillEnterSmallFencesThroughTheirInnerHalf() {
        #expect(run([(500, 5, 0), (40, 400, 10)]) == ["enter@10"], "40 + min(400, 50) <= 100")
        #expect(run([(500, 5, 0), (60, 400, 10)]) == [], "60 + 50 > 100")
    }

    @Test func exitingNeedsTheHysteresisMargin() {
        #expect(run([(0, 5, 0), (105, 0, 10)]) == [], "105 m is within the default 10 m margin")
        #expect(run([(0, 5, 0), (105, 0, 10), (115, 0, 20)]) == ["exit@20"])
        #expect(run(TransitionRules(hysteresis: 0), [(0, 5, 0), (105, 0, 10)]) == ["exit@10"])
        #expect(run([(0, 5, 0), (150, 50, 10)]) == [], "150 - 50 <= 110: not outside with confidence")
    }

    @Test func theDefaultMarginGrowsWithTheFence() {
        let large = fence(radius: 1_000)
        #expect(run(fence: large, [(0, 5, 0), (1_090, 0, 10)]) == [], "10 % of 1 km is 100 m")
        #expect(run(fence: large, [(0, 5, 0), (1_090, 0, 10), (1_101, 0, 20)]) == ["exit@20"])
    }

    @Test func theDefaultMarginIsAtLeastTenMetres() {
        let small = fence(radius: 20)
        #expect(run(fence: small, [(0, 5, 0), (29, 0, 10)]) == [], "10 % of 20 m is 2 m, but the margin is at least 10 m")
        #expect(run(fence: small, [(0, 5, 0), (29, 0, 10), (31, 0, 20)]) == ["exit@20"])
    }

    @Test func jitterAcrossTheEdgeDoesNotFlap() {
        let jitter: [(Double, Double?, Double)] = (0..<60).map { (index: Int) -> (Double, Double?, Double) in
            let metres: Double = index % 2 == 0 ? 95 : 106
            return (metres, 12, Double(index * 30))
        }
        #expect(run(jitter) == [])
        #expect(run(.none, jitter).count == 59)
    }

    /// A fence left and entered again within one fix time keeps count of its changes
    /// at that time, also across a fix that only confirms the device is out: the second
    /// entry at 10 is `~2`, not a second notification with the first one's id.
    @Test func aFixConfirmingAnExitAtItsOwnTimeKeepsTheCountOfChangesAtThatTime() {
        let evaluator = Evaluator(acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        var ids: [String] = []
        for (metres, time) in [(500.0, 0.0), (0, 10), (500, 10), (500, 10), (0, 10)] {
            let fix = Fix(device: "d", coordinate: north(metres), accuracy: 5, timestamp: time)
            ids += evaluator.evaluate(fix, fences: [fence()], revision: 1, now: time, state: &state).notifications.map(\.eventID)
        }
        #expect(ids == ["d/home/enter/10", "d/home/exit/10", "d/home/enter/10~2"])
    }

    // MARK: minimum duration

    @Test func aQuickInAndOutShorterThanTheMinimumPublishesNothing() {
        let rules = TransitionRules(minimumDuration: 60)
        #expect(run(rules, [(500, 5, 0), (0, 5, 100), (500, 5, 130), (500, 5, 400)]) == [])
        #expect(run(TransitionRules(), [(500, 5, 0), (0, 5, 100), (500, 5, 130)]) == ["enter@100", "exit@130"])
    }

    @Test func aChangeThatHoldsIsPublishedWithTheTimeItBegan() {
        let rules = TransitionRules(minimumDuration: 60)
        #expect(run(rules, [(500, 5, 0), (0, 5, 200), (0, 5, 230), (0, 5, 270)]) == ["enter@200"])
    }

    @Test func theTimerConfirmsAChangeWhenNoFixComes() {
        let evaluator = Evaluator(rules: TransitionRules(minimumDuration: 60), acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        for (metres, time) in [(500.0, 0.0), (0, 200)] {
            _ = evaluator.evaluate(Fix(device: "d", coordinate: north(metres), accuracy: 5, timestamp: time), fences: [fence()], revision: 1, now: time, state: &state)
        }
        #expect(evaluator.nextDeadline(fences: [fence()], state: state) == 260)
        #expect(evaluator.advance(to: 259, fences: [fence()], state: &state).transitions.isEmpty)
        let confirmed = evaluator.advance(to: 260, fences: [fence()], state: &state)
        #expect(confirmed.transitions.map(\.kind) == [.enter])
        #expect(confirmed.transitions.first?.fix.timestamp == 200)
        #expect(evaluator.nextDeadline(fences: [fence()], state: state) == nil)
    }

    @Test func aFencesOwnMinimumDurationSetsItsDeadline() {
        let patient = fence(rules: FenceRules(minimumDuration: 120))
        let evaluator = Evaluator(rules: TransitionRules(minimumDuration: 60), acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        for (metres, time) in [(500.0, 0.0), (0, 200)] {
            _ = evaluator.evaluate(Fix(device: "d", coordinate: north(metres), accuracy: 5, timestamp: time), fences: [patient], revision: 1, now: time, state: &state)
        }
        #expect(evaluator.nextDeadline(fences: [patient], state: state) == 320, "200 + the fence's 120 s, not the global 60")
        #expect(evaluator.advance(to: 319, fences: [patient], state: &state).transitions.isEmpty)
        #expect(evaluator.advance(to: 320, fences: [patient], state: &state).transitions.map(\.kind) == [.enter])
    }

    // MARK: dwell

    @Test func dwellFiresOncePerStayByFixTimes() {
        let dwelling = fence([.onEntry, .onDwell], rules: FenceRules(dwell: 300))
        let steps: [(Double, Double?, Double)] = [(500, 5, 0), (0, 5, 10), (0, 5, 200), (0, 5, 320), (0, 5, 900), (500, 5, 1_000), (0, 5, 1_100), (0, 5, 1_500)]
        #expect(run(fence: dwelling, steps) == ["enter@10", "dwell@310", "exit@1000", "enter@1100", "dwell@1400"])
        #expect(run(fence: fence([.onEntry, .onDwell]), steps) == ["enter@10", "exit@1000", "enter@1100"], "no dwell without a dwell time")
        #expect(run(TransitionRules(dwell: 300), fence: fence([.onEntry, .onDwell]), steps) == ["enter@10", "dwell@310", "exit@1000", "enter@1100", "dwell@1400"],
                "the rules' dwell, for a fence that sets none")
    }

    /// By the clock too, whether the fence sets its dwell time or the rules do for every
    /// fence that sets none.
    @Test(arguments: [true, false])
    func dwellFiresByTimerWhenNoFixComes(fenceSetsIt: Bool) {
        let dwelling = fenceSetsIt ? fence([.onDwell], rules: FenceRules(dwell: 300)) : fence([.onDwell])
        let evaluator = Evaluator(rules: TransitionRules(dwell: fenceSetsIt ? nil : 300), acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        for (metres, time) in [(500.0, 0.0), (0, 10)] {
            _ = evaluator.evaluate(Fix(device: "d", coordinate: north(metres), accuracy: 5, timestamp: time), fences: [dwelling], revision: 1, now: time, state: &state)
        }
        #expect(evaluator.nextDeadline(fences: [dwelling], state: state) == 310)
        #expect(evaluator.advance(to: 309, fences: [dwelling], state: &state).transitions.isEmpty, "not yet")
        let dwell = evaluator.advance(to: 311, fences: [dwelling], state: &state)
        #expect(dwell.notifications.map(\.kind) == [.dwell])
        #expect(dwell.notifications.first?.eventID == "d/home/dwell/310")
        #expect(evaluator.advance(to: 900, fences: [dwelling], state: &state).transitions.isEmpty)
    }

    /// A dwell the clock fires has no fix of its own: it carries where the device was
    /// last seen (and that fix's accuracy), not the fence's centre.
    @Test func aDwellTheClockFiresCarriesTheLastFixsPosition() {
        let dwelling = fence([.onDwell], rules: FenceRules(dwell: 300))
        let evaluator = Evaluator(acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        for (metres, time) in [(500.0, 0.0), (40, 10), (30, 200)] {
            _ = evaluator.evaluate(Fix(device: "d", coordinate: north(metres), accuracy: 7, timestamp: time), fences: [dwelling], revision: 1, now: time, state: &state)
        }
        let dwell = evaluator.advance(to: 311, fences: [dwelling], state: &state)
        #expect(dwell.transitions.map(\.kind) == [.dwell])
        #expect(dwell.transitions.first?.fix.coordinate == north(30))
        #expect(dwell.transitions.first?.fix.accuracy == 7)
        #expect(dwell.transitions.first?.fix.timestamp == 310)
    }

    /// A timer that fell due before a fix fires before that fix is applied, so fixes
    /// replayed with no clock tick in between (a burst the broker held while the bridge
    /// was away) give what the clock would have: a change confirmed and a dwell fired
    /// before the fix that ends them.
    @Test func aTimerDueBeforeAFixFiresBeforeTheFixIsApplied() {
        #expect(run(TransitionRules(minimumDuration: 60), [(500, 5, 0), (0, 5, 100), (500, 5, 200)]) == ["enter@100"],
                "the stay held 100 s of the 60; the way out is still pending")
        let dwelling = fence([.onEntry, .onExit, .onDwell], rules: FenceRules(dwell: 300))
        #expect(run(fence: dwelling, [(500, 5, 0), (0, 5, 10), (500, 5, 400)]) == ["enter@10", "dwell@310", "exit@400"])
    }

    // MARK: ordering and staleness

    @Test func fixesOlderThanTheLastOneAreDropped() {
        let evaluator = Evaluator(acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        _ = evaluator.evaluate(Fix(device: "d", coordinate: north(500), timestamp: 100), fences: [fence()], revision: 1, now: 100, state: &state)
        let stale = evaluator.evaluate(Fix(device: "d", coordinate: north(0), timestamp: 90), fences: [fence()], revision: 1, now: 101, state: &state)
        #expect(stale.outcome == .dropped(.outOfOrder))
        #expect(stale.transitions.isEmpty)
        #expect(state.lastFix?.timestamp == 100)
        // Fixes may share a time (a tracker's clock ticks in seconds): one at the time of
        // the last is evaluated, and here it is the one that enters.
        let sameTime = evaluator.evaluate(Fix(device: "d", coordinate: north(0), timestamp: 100), fences: [fence()], revision: 1, now: 101, state: &state)
        #expect(sameTime.outcome == .evaluated)
        #expect(sameTime.transitions.map(\.kind) == [.enter])
    }

    @Test func fixesTooOldOrFromTheFutureAreDropped() {
        let acceptance = FixAcceptance(maximumAge: 86_400, maximumFutureSkew: 300)
        let now = 1_800_000_000.0
        func drop(_ timestamp: Double) -> FixAcceptance.Drop? {
            acceptance.drop(Fix(device: "d", coordinate: north(0), timestamp: timestamp), lastAccepted: nil, now: now)
        }
        #expect(drop(now - 86_401) == .tooOld)
        #expect(drop(now - 86_400) == nil, "exactly maximumAge old is still young enough")
        #expect(drop(now - 86_399) == nil)
        #expect(drop(now + 299) == nil)
        #expect(drop(now + 300) == nil, "exactly maximumFutureSkew ahead is still accepted")
        #expect(drop(now + 301) == .future)
        #expect(FixAcceptance(maximumAge: 0).drop(Fix(device: "d", coordinate: north(0), timestamp: 0), lastAccepted: nil, now: now) == nil)
    }

    /// A fix worse than the global threshold decides a fence whose own threshold is
    /// wider, and only that one: every other fence keeps to the global one. A fix worse
    /// than every threshold is inaccurate, as ever.
    @Test(arguments: [false, true])
    func aFencesWiderThresholdDecidesThatFenceAlone(shared: Bool) {
        let evaluator = Evaluator(rules: TransitionRules(maximumAccuracy: 100), acceptance: FixAcceptance(maximumAge: 0))
        let region = Region.circle(center: Self.center, radius: 1_000)
        let city = Fence(identifier: "city", region: region, note: "", eventType: [.onEntry], rules: FenceRules(maximumAccuracy: 500), addedRevision: 1)
        let block = Fence(identifier: "block", region: region, note: "", eventType: [.onEntry], addedRevision: 1)
        let fences = deviceFences([city, block], shared: shared)
        var state = DeviceState()
        func evaluate(_ metres: Double, accuracy: Double, at time: Double) -> Evaluation {
            let fix = Fix(device: "d", coordinate: north(metres), accuracy: accuracy, timestamp: time)
            return evaluator.evaluate(fix, fences: fences, revision: 1, now: time, state: &state)
        }
        _ = evaluate(3_000, accuracy: 5, at: 0)
        let wild = evaluate(0, accuracy: 600, at: 10)
        #expect(wild.outcome == .inaccurate && wild.transitions.isEmpty)
        let coarse = evaluate(0, accuracy: 300, at: 20)
        #expect(coarse.outcome == .evaluated)
        #expect(coarse.transitions.map(\.fence.identifier) == ["city"])
        #expect(evaluate(0, accuracy: 50, at: 30).transitions.map(\.fence.identifier) == ["block"])
    }

    // MARK: initial trigger

    @Test(arguments: [
        (InitialTrigger.none, 0.0, [String]()), (.none, 500, []),
        (.enter, 0, ["enter@0"]), (.enter, 500, []),
        (.exit, 0, []), (.exit, 500, ["exit@0"]),
    ])
    func initialTrigger(trigger: InitialTrigger, start: Double, expected: [String]) {
        #expect(run(TransitionRules(initialTrigger: trigger), [(start, 5, 0)]) == expected)
    }

    /// Of a device's own fence and of a shared one alike (whose fixes that change
    /// nothing are decided by the global rules from its slot, so never one with rules of
    /// its own).
    @Test(arguments: [false, true])
    func aFenceOverrideBeatsTheGlobalRule(shared: Bool) {
        let strict = fence(rules: FenceRules(maximumAccuracy: 20))
        #expect(run(TransitionRules(), fence: strict, shared: shared, [(500, 5, 0), (0, 50, 10)]) == [])
        #expect(run(TransitionRules(), fence: strict, shared: shared, [(500, 5, 0), (0, 15, 10)]) == ["enter@10"])
        let tight = fence(rules: FenceRules(hysteresis: 0))
        #expect(run(TransitionRules(hysteresis: 50), fence: tight, shared: shared, [(0, 5, 0), (105, 0, 10)]) == ["exit@10"])
        // A wider threshold: `aFencesWiderThresholdDecidesThatFenceAlone`; 0 turns it off.
        let unchecked = fence(rules: FenceRules(maximumAccuracy: 0), radius: 10_000)
        #expect(run(TransitionRules(maximumAccuracy: 100), fence: unchecked, shared: shared, [(30_000, 5, 0), (0, 3_000, 10)]) == ["enter@10"],
                "0 turns the fence's check off")
    }
}
