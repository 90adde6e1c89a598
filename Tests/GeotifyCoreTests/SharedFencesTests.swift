import Testing
import GeotifyCore

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

    @Test func indexedEvaluationMatchesAllFencesAsOwnOnes() {
        var random = SystemRandomNumberGenerator()
        let fences = (0..<300).map { index in
            circle("f\(index)", Double.random(in: -89.9...89.9, using: &random), Double.random(in: -180...180, using: &random),
                   radius: Double.random(in: 50...50_000, using: &random))
        }
        let evaluator = Evaluator(rules: .none, acceptance: FixAcceptance(maximumAge: 0))
        var indexed = DeviceState()
        var linear = DeviceState()
        let shared = DeviceFences(shared: [SharedFences(owner: "shared", fences: fences)])
        for time in 0..<2_000 {
            let anchor = fences[Int.random(in: 0..<fences.count, using: &random)].region.center
            let point = fix(min(90, max(-90, anchor.latitude + Double.random(in: -0.3...0.3, using: &random))),
                            Coordinate.wrappedLongitude(anchor.longitude + Double.random(in: -0.3...0.3, using: &random)), at: Double(time))
            let viaIndex = evaluator.evaluate(point, fences: shared, revision: 1, now: Double(time), state: &indexed)
            let viaList = evaluator.evaluate(point, fences: fences, revision: 1, now: Double(time), state: &linear)
            #expect(Set(viaIndex.transitions.map { "\($0.kind) \($0.fence.identifier)" }) == Set(viaList.transitions.map { "\($0.kind) \($0.fence.identifier)" }))
        }
        #expect(indexed.insideFences == linear.insideFences)
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
