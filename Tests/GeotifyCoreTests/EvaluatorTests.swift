import Testing
import GeotifyCore

@Suite("Evaluator")
struct EvaluatorTests {
    let evaluator = Evaluator()
    let home = Coordinate(latitude: 52.52, longitude: 13.405)
    let away = Coordinate(latitude: 52.50, longitude: 13.405)

    func fence(_ id: String, _ center: Coordinate, radius: Double = 100, _ eventType: EventType = [.onEntry, .onExit], revision: Int = 1) -> Fence {
        Fence(identifier: id, region: .circle(center: center, radius: radius), note: "note \(id)", eventType: eventType, addedRevision: revision)
    }

    func fix(_ coordinate: Coordinate, at time: Double) -> Fix {
        Fix(device: "alice/phone", coordinate: coordinate, accuracy: 5, timestamp: time)
    }

    func evaluate(_ fix: Fix, _ fences: [Fence], revision: Int, _ state: inout DeviceState) -> Evaluation {
        evaluator.evaluate(fix, fences: fences, revision: revision, now: fix.timestamp, state: &state)
    }

    @Test func firstFixOnlyEstablishesState() {
        var state = DeviceState()
        let evaluation = evaluate(fix(home, at: 1), [fence("home", home)], revision: 1, &state)
        #expect(evaluation.transitions.isEmpty)
        #expect(state.isInside("home"))
        #expect(state.badge == 0)
        #expect(state.revision == 1)
    }

    @Test func crossingsProduceTransitionsAndCountTheBadge() {
        var state = DeviceState()
        let fences = [fence("home", home)]
        _ = evaluate(fix(away, at: 1), fences, revision: 1, &state)
        let entry = evaluate(fix(home, at: 2), fences, revision: 1, &state)
        #expect(entry.notifications.map(\.kind) == [.enter])
        #expect(entry.notifications.first?.badge == 1)
        #expect(entry.notifications.first?.note == "note home")
        let stay = evaluate(fix(home, at: 3), fences, revision: 1, &state)
        #expect(stay.transitions.isEmpty)
        let exit = evaluate(fix(away, at: 4), fences, revision: 1, &state)
        #expect(exit.notifications.map(\.kind) == [.exit])
        #expect(exit.notifications.first?.badge == 2)
        #expect(state.badge == 2)
        #expect(!state.isInside("home"))
    }

    @Test(arguments: [
        (EventType.onEntry, [TransitionKind.enter]),
        (EventType.onExit, [TransitionKind.exit]),
        (EventType(name: "onEntryAndExit")!, [TransitionKind.enter, .exit]),
    ] as [(EventType, [TransitionKind])])
    func eventTypeFiltersNotifications(eventType: EventType, notified: [TransitionKind]) {
        var state = DeviceState()
        let fences = [fence("home", home, eventType)]
        var kinds: [TransitionKind] = []
        var transitions = 0
        for (time, place) in [away, home, away].enumerated() {
            let evaluation = evaluate(fix(place, at: Double(time)), fences, revision: 1, &state)
            kinds += evaluation.notifications.map(\.kind)
            transitions += evaluation.transitions.count
        }
        #expect(transitions == 2)
        #expect(kinds == notified)
        #expect(state.badge == notified.count)
    }

    @Test func aFenceAddedLaterEstablishesStateWithoutAnEvent() {
        var state = DeviceState()
        _ = evaluate(fix(home, at: 1), [fence("office", away)], revision: 1, &state)
        let fences = [fence("office", away), fence("home", home, revision: 2)]
        let first = evaluate(fix(home, at: 2), fences, revision: 2, &state)
        #expect(first.transitions.isEmpty)
        #expect(state.isInside("home"))
        let exit = evaluate(fix(away, at: 3), fences, revision: 2, &state)
        #expect(exit.transitions.map(\.kind) == [.exit, .enter], "fences the device has state for come first")
        #expect(exit.transitions.map(\.fence.identifier) == ["home", "office"])
    }

    /// A state at revision 1 that names `fence` twice, outside since 1 both times.
    func stateNamingTwice(_ fence: String) -> DeviceState {
        DeviceState(revision: 1, fences: [FenceState(fence: fence, inside: false, since: 1), FenceState(fence: fence, inside: false, since: 1)])
    }

    /// That state after a fix inside `fence` at 2, applied to its first entry alone.
    func enteredAtTheFirstEntry(_ fence: String) -> [FenceState] {
        [FenceState(fence: fence, inside: true, since: 2), FenceState(fence: fence, inside: false, since: 1)]
    }

    /// A state that names a fence twice (a hand-edited or damaged state database; the
    /// store reads such a row as it is): a fix applies to the fence's first entry alone,
    /// once, as it does for a shared fence. The own fences' fast path finds the first
    /// entry by one bit per fence for the first 64 of a device's fences and by a search
    /// past them: both are asked here, on each side of the 64th.
    @Test(arguments: [3, 63, 64, 65])
    func aFenceNamedTwiceInTheStateIsObservedOnceAtItsFirstEntry(index: Int) {
        let fences = (0..<70).map { fence("f\($0)", Coordinate(latitude: 40 + Double($0) / 10, longitude: 13.405)) }
        let named = "f\(index)"
        var state = stateNamingTwice(named)
        let evaluation = evaluate(fix(fences[index].region.center, at: 2), fences, revision: 1, &state)
        #expect(evaluation.transitions.map(\.kind) == [.enter])
        #expect(evaluation.transitions.map(\.fence.identifier) == [named])
        #expect(state.fences == enteredAtTheFirstEntry(named))
    }

    /// The same state for a fence of a shared set: the fix applies to the first entry, and
    /// the second, observed after it, finds the fix already applied.
    @Test func aSharedFenceNamedTwiceInTheStateIsObservedOnceAtItsFirstEntry() {
        let fences = DeviceFences(shared: [SharedFences(owner: "shared", fences: [fence("poi", home), fence("far", away)])])
        var state = stateNamingTwice("poi")
        let evaluation = evaluator.evaluate(fix(home, at: 2), fences: fences, revision: 1, now: 2, state: &state)
        #expect(evaluation.transitions.map(\.kind) == [.enter])
        #expect(evaluation.transitions.map(\.fence.identifier) == ["poi"])
        #expect(state.fences == enteredAtTheFirstEntry("poi"))
    }

    /// The same state for a fence added since the state's revision: its first entry is
    /// started afresh, and the fix establishes it there, without an event.
    @Test func aFenceAddedSinceTheStateAndNamedTwiceInItIsEstablishedAtItsFirstEntry() {
        var state = stateNamingTwice("home")
        let evaluation = evaluate(fix(home, at: 2), [fence("home", home, revision: 2)], revision: 2, &state)
        #expect(evaluation.transitions.isEmpty)
        #expect(state.fences == enteredAtTheFirstEntry("home"))
    }

    /// The same state with a change pending at its first entry: the clock confirms it
    /// there, once.
    @Test func aTimerOfAFenceNamedTwiceInTheStateFiresAtItsFirstEntry() {
        let patient = Evaluator(rules: TransitionRules(minimumDuration: 60))
        var state = stateNamingTwice("home")
        state.lastFix = fix(home, at: 2)
        state.fences[0].pending = PendingChange(inside: true, coordinate: home, accuracy: 5, timestamp: 2)
        let evaluation = patient.advance(to: 70, fences: [fence("home", home)], state: &state)
        #expect(evaluation.transitions.map(\.kind) == [.enter])
        #expect(state.fences == enteredAtTheFirstEntry("home"))
    }

    @Test func aRemovedFenceIsForgottenAndAReaddedOneStartsAfresh() {
        var state = DeviceState()
        _ = evaluate(fix(home, at: 1), [fence("home", home)], revision: 1, &state)
        _ = evaluate(fix(home, at: 2), [], revision: 2, &state)
        #expect(state.fences.isEmpty)
        let readded = evaluate(fix(home, at: 3), [fence("home", home, revision: 3)], revision: 3, &state)
        #expect(readded.transitions.isEmpty)
        #expect(state.fences.first?.since == 3)
    }

    /// A removed fence is reported as forgotten only when the device was inside it (the
    /// lane then takes the device out of its occupancy); an entry it kept for a fence
    /// it is outside of, such as a pending entry, goes without a word.
    @Test func aRemovedFenceIsReportedForgottenOnlyWhenTheDeviceWasInside() {
        let patient = Evaluator(rules: TransitionRules(minimumDuration: 60))
        var state = DeviceState()
        let fences = [fence("home", home), fence("work", away)]
        _ = patient.evaluate(fix(away, at: 1), fences: fences, revision: 1, now: 1, state: &state)
        _ = patient.evaluate(fix(home, at: 2), fences: fences, revision: 1, now: 2, state: &state)
        #expect(state.fences.map(\.fence) == ["home", "work"])
        #expect(state.fences.first?.pending?.inside == true, "home: entered 1 s ago, not yet for 60 s")
        #expect(state.isInside("work"))
        let removed = patient.evaluate(fix(home, at: 3), fences: [], revision: 2, now: 3, state: &state)
        #expect(removed.forgotten == ["work"])
        #expect(state.fences.isEmpty)
    }

    @Test func anEditedFenceKeepsTheDeviceState() {
        var state = DeviceState()
        _ = evaluate(fix(home, at: 1), [fence("home", home)], revision: 1, &state)
        let moved = [fence("home", Coordinate(latitude: 10, longitude: 10), revision: 1)]
        let evaluation = evaluate(fix(home, at: 2), moved, revision: 2, &state)
        #expect(evaluation.transitions.map(\.kind) == [.exit])
    }

    @Test func overlappingFencesAreIndependent() {
        var state = DeviceState()
        let fences = [fence("small", home, radius: 50), fence("large", home, radius: 5000)]
        _ = evaluate(fix(away, at: 1), fences, revision: 1, &state)
        let evaluation = evaluate(fix(home, at: 2), fences, revision: 1, &state)
        #expect(evaluation.transitions.map(\.fence.identifier) == ["small"])
        #expect(evaluation.notifications.map(\.badge) == [1])
        let large = evaluate(fix(Coordinate(latitude: 52.53, longitude: 13.405), at: 3), fences, revision: 1, &state)
        #expect(large.transitions.map(\.fence.identifier) == ["small"])
        #expect(state.isInside("large"))
    }

    @Test func eventIDsAreStable() {
        var state = DeviceState()
        let fences = [fence("home", home)]
        _ = evaluate(fix(away, at: 1_700_000_000), fences, revision: 1, &state)
        let evaluation = evaluate(fix(home, at: 1_700_000_060), fences, revision: 1, &state)
        #expect(evaluation.notifications.first?.eventID == "alice/phone/home/enter/1700000060")
    }
}
