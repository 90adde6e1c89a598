import Testing
import GeotifyCore
import GeotifyTestSupport

/// Fences shared by many devices, found through the spatial index, with state kept
/// only for the fences a device is inside.
@Suite("Shared fences")
struct SharedFencesTests {
    func circle(_ id: String, _ latitude: Double, _ longitude: Double, radius: Double = 100, revision: Int = 1) -> Fence {
        Fence(identifier: id, region: .circle(center: Coordinate(latitude: latitude, longitude: longitude), radius: radius),
              note: id, eventType: [.onEntry, .onExit], addedRevision: revision)
    }

    func fix(_ latitude: Double, _ longitude: Double, at time: Double) -> Fix {
        Fix(device: "d", coordinate: Coordinate(latitude: latitude, longitude: longitude), accuracy: 5, timestamp: time)
    }

    @Test func aDeviceEntersAndLeavesSharedFencesAmongThousands() {
        var pois = (0..<5_000).map { circle("poi\($0)", 48 + Double($0 % 100) * 0.01, 11 + Double($0 / 100) * 0.01, radius: 50) }
        pois.append(circle("antimeridian", 0, 179.9999, radius: 200))
        let fences = DeviceFences(own: [circle("home", 52.52, 13.405)], shared: [SharedFences(owner: "shared", fences: pois)])
        let evaluator = Evaluator(acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        var seen: [String] = []
        let path: [(Double, Double)] = [(47, 10), (48.05, 11.03), (48.05, 11.03), (48.5, 11.5), (52.52, 13.405), (0, -179.9999), (0, 179.99)]
        for (time, point) in path.enumerated() {
            let evaluation = evaluator.evaluate(fix(point.0, point.1, at: Double(time)), fences: fences, revision: 1, now: Double(time), state: &state)
            seen += evaluation.transitions.map { "\($0.kind.rawValue) \($0.fence.identifier)" }
        }
        #expect(seen == ["enter poi305", "exit poi305", "enter home", "exit home", "enter antimeridian", "exit antimeridian"])
        #expect(state.fences.isEmpty, "no state is kept for fences the device is outside")
    }

    /// The indexed evaluation gives exactly the transitions of evaluating every fence,
    /// on a seeded random workload where a third of the fences are near the poles and a
    /// third straddle the antimeridian, with circles and polygons.
    @Test(arguments: [TransitionRules.none, TransitionRules()])
    func indexedEvaluationMatchesEvaluatingEveryFence(rules: TransitionRules) throws {
        var random = SplitMix64(seed: 2_026)
        func uniform(_ range: ClosedRange<Double>) -> Double { range.lowerBound + random.unit() * (range.upperBound - range.lowerBound) }
        var fences: [Fence] = []
        for index in 0..<450 {
            let latitude: Double
            let longitude: Double
            switch index % 3 {
            case 0: (latitude, longitude) = (uniform(84...89.95) * (index % 2 == 0 ? 1 : -1), uniform(-180...180))
            case 1: (latitude, longitude) = (uniform(-60...60), Coordinate.wrappedLongitude(uniform(179.5...180.5)))
            default: (latitude, longitude) = (uniform(-70...70), uniform(-180...180))
            }
            if index % 5 == 0 {
                let size = uniform(0.005...0.05)
                let ring = [(0.0, 0.0), (size, 0), (size, size * 0.7), (size * 0.3, size)].map {
                    Coordinate(latitude: min(89.99, latitude + $0.1), longitude: Coordinate.wrappedLongitude(longitude + $0.0))
                }
                fences.append(Fence(identifier: "p\(index)", region: .polygon(try Polygon(outer: ring)), note: "", eventType: [.onEntry, .onExit], addedRevision: 1))
            } else {
                fences.append(circle("c\(index)", latitude, longitude, radius: uniform(20...20_000)))
            }
        }
        let evaluator = Evaluator(rules: rules, acceptance: FixAcceptance(maximumAge: 0))
        let shared = DeviceFences(shared: [SharedFences(owner: "shared", fences: fences)])
        // The same fences as a device's own, made once (as the bridge's fence book does):
        // making them per fix built their table, polygons' interior discs included, 6 000
        // times over.
        let own = DeviceFences(own: fences)
        var indexed = Array(repeating: DeviceState(), count: 8)
        var linear = Array(repeating: DeviceState(), count: 8)
        var transitions = 0
        for time in 0..<6_000 {
            let device = time % 8
            let anchor = fences[Int(random.next() % UInt64(fences.count))].region.center
            let point = Fix(
                device: "d\(device)",
                coordinate: Coordinate(latitude: min(90, max(-90, anchor.latitude + uniform(-0.2...0.2))),
                                       longitude: Coordinate.wrappedLongitude(anchor.longitude + uniform(-0.3...0.3))),
                accuracy: uniform(0...40), timestamp: Double(time))
            let viaIndex = evaluator.evaluate(point, fences: shared, revision: 1, now: Double(time), state: &indexed[device])
            let viaList = evaluator.evaluate(point, fences: own, revision: 1, now: Double(time), state: &linear[device])
            let expected = Set(viaList.transitions.map { "\($0.kind) \($0.fence.identifier)" })
            #expect(Set(viaIndex.transitions.map { "\($0.kind) \($0.fence.identifier)" }) == expected, "fix \(time)")
            transitions += expected.count
        }
        #expect(indexed.map { $0.fences.filter(\.inside).map(\.fence) } == linear.map { $0.fences.filter(\.inside).map(\.fence) })
        #expect(transitions > 500, "the workload crosses fences often enough to mean something")
    }

    /// The slots decide only the fixes that change nothing; a fence with rules of its
    /// own and one added after the device's last fix go through the fences themselves:
    /// the same transitions and the same stays as a list of fences gives.
    @Test func fencesTheSlotsCannotDecideEvaluateAsAListDoes() {
        let lingering = Fence(
            identifier: "lingering", region: .circle(center: Coordinate(latitude: 10, longitude: 10), radius: 300),
            note: "", eventType: [.onEntry, .onExit], rules: FenceRules(minimumDuration: 60), addedRevision: 1)
        let newer = circle("newer", 10, 10.001, radius: 400, revision: 2)
        let fences = [lingering, newer, circle("plain", 10, 10, radius: 250), circle("north", 10.002, 10, radius: 200)]
        let evaluator = Evaluator(acceptance: FixAcceptance(maximumAge: 0))
        let shared = DeviceFences(shared: [SharedFences(owner: "shared", fences: fences)])
        var viaSlots = DeviceState()
        var viaList = DeviceState()
        let path: [(Double, Double, Int)] = [
            (9.99, 10, 1), (10, 10, 1), (10, 10, 2), (10.0021, 10.0005, 2), (10, 10.001, 2), (9.99, 10, 2), (10, 10, 2),
        ]
        for (time, (latitude, longitude, revision)) in path.enumerated() {
            let now = Double(time) * 40
            let slots = evaluator.evaluate(fix(latitude, longitude, at: now), fences: shared, revision: revision, now: now, state: &viaSlots)
            let list = evaluator.evaluate(fix(latitude, longitude, at: now), fences: fences, revision: revision, now: now, state: &viaList)
            #expect(slots.transitions == list.transitions && slots.notifications == list.notifications, "fix \(time)")
            #expect(viaSlots.fences.filter(\.inside) == viaList.fences.filter(\.inside), "fix \(time)")
        }
        #expect(viaSlots.isInside("plain") && viaSlots.isInside("lingering"))
    }

    /// A fix back inside a shared fence drops the exit it had begun to wait for, though
    /// the slot alone says the device is inside and nothing else changes.
    @Test func aFixBackInsideDropsTheExitASharedFenceWaitedFor() {
        let office = circle("office", 10, 10, radius: 300)
        let evaluator = Evaluator(rules: TransitionRules(minimumDuration: 60), acceptance: FixAcceptance(maximumAge: 0))
        let fences = DeviceFences(shared: [SharedFences(owner: "shared", fences: [office])])
        var state = DeviceState()
        var seen: [TransitionKind] = []
        for (latitude, time) in [(10.0, 0.0), (9.99, 100), (10, 130), (10, 200)] {
            seen += evaluator.evaluate(fix(latitude, 10, at: time), fences: fences, revision: 1, now: time, state: &state).transitions.map(\.kind)
            if time == 100 { #expect(state.fences.first?.pending?.inside == false, "1.1 km out: an exit waits") }
        }
        seen += evaluator.advance(to: 400, fences: fences, state: &state).transitions.map(\.kind)
        #expect(seen == [])
        #expect(state.fences.first?.pending == nil && state.isInside("office"))
    }

    /// Two of a device's shared sets with a fence of the same name: the first set's is
    /// the one in force (`DeviceFences.fence`), also for a fix inside only the later
    /// set's. Its slot is not a shortcut to the entry: the device leaves the fence it was
    /// in, and does not stay inside by the other fence.
    @Test func ofTwoSetsNamingAFenceAlikeTheFirstSetsIsInForce() {
        let first = circle("school", 10, 10, radius: 200)
        let later = circle("school", 11, 11, radius: 200)
        let fences = DeviceFences(shared: [SharedFences(owner: "a", fences: [first]), SharedFences(owner: "b", fences: [later])])
        #expect(fences.fence("school") == first)
        let evaluator = Evaluator(rules: .none, acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        _ = evaluator.evaluate(fix(10, 10, at: 0), fences: fences, revision: 1, now: 0, state: &state)
        #expect(state.isInside("school"))
        let evaluation = evaluator.evaluate(fix(11, 11, at: 60), fences: fences, revision: 1, now: 60, state: &state)
        #expect(evaluation.transitions.map { "\($0.kind) \($0.fence.identifier)" } == ["exit school"])
        #expect(evaluation.transitions.first?.fence == first)
        #expect(!state.isInside("school"))
    }

    @Test func aFenceThatNoLongerAppliesIsForgottenAndReported() {
        let office = circle("office", 52.5, 13.4)
        let evaluator = Evaluator(acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        _ = evaluator.evaluate(fix(52.5, 13.4, at: 0), fences: DeviceFences(shared: [SharedFences(owner: "team", fences: [office])]), revision: 1, now: 0, state: &state)
        #expect(state.isInside("office"))
        let evaluation = evaluator.evaluate(fix(52.5, 13.4, at: 1), fences: DeviceFences(), revision: 2, now: 1, state: &state)
        #expect(evaluation.forgotten == ["office"])
        #expect(evaluation.transitions.isEmpty)
        #expect(state.fences.isEmpty)
    }

    @Test func booksGiveEachDeviceItsGroupsSets() {
        let book = FenceBook(
            devices: ["alice/phone": [circle("home", 1, 1)]],
            groups: ["family": ["alice/phone", "bob/phone"]],
            shared: ["shared": SharedFences(owner: "shared", fences: [circle("office", 2, 2)]),
                     "family": SharedFences(owner: "family", fences: [circle("school", 3, 3)])])
        #expect(book.deviceFences(of: "alice/phone").shared.map(\.owner) == ["shared", "family"])
        #expect(book.deviceFences(of: "bob/phone").own.isEmpty)
        #expect(book.deviceFences(of: "carol/phone").shared.map(\.owner) == ["shared"])
        #expect(book.knows("bob/phone") && !book.knows("carol/phone"))
        #expect(book.fenceCount == 3)
        let revised = book.revised(knownRevisions: [:], currentRevision: 0)
        #expect(revised.knownRevisions[FenceBook.scope(ofShared: "family")] == ["school": 1])
        #expect(revised.revised(from: revised) == revised)
    }
}
