import Testing
import GeotifyCore

@Suite("Polygon fences")
struct PolygonFenceTests {
    func run(_ fence: Fence, _ points: [Coordinate], rules: TransitionRules = TransitionRules()) -> [TransitionKind] {
        let evaluator = Evaluator(rules: rules, acceptance: FixAcceptance(maximumAge: 0))
        var state = DeviceState()
        var kinds: [TransitionKind] = []
        for (time, point) in points.enumerated() {
            let fix = Fix(device: "d", coordinate: point, accuracy: 5, timestamp: Double(time))
            kinds += evaluator.evaluate(fix, fences: [fence], revision: 1, now: Double(time), state: &state).transitions.map(\.kind)
        }
        return kinds
    }

    func polygon(_ ring: [(Double, Double)], holes: [[(Double, Double)]] = []) throws -> Fence {
        let region = Region.polygon(try Polygon(
            outer: ring.map { Coordinate(latitude: $0.1, longitude: $0.0) },
            holes: holes.map { $0.map { Coordinate(latitude: $0.1, longitude: $0.0) } }))
        return Fence(identifier: "zone", region: region, note: "", eventType: [.onEntry, .onExit], addedRevision: 1)
    }

    @Test func enterAndExitASquareWithHysteresis() throws {
        let square = try polygon([(13.40, 52.51), (13.41, 52.51), (13.41, 52.52), (13.40, 52.52)])
        let outside = Coordinate(latitude: 52.50, longitude: 13.405)
        let inside = Coordinate(latitude: 52.515, longitude: 13.405)
        let justOutside = Coordinate(latitude: 52.52005, longitude: 13.405)
        #expect(run(square, [outside, inside, justOutside, outside]) == [.enter, .exit])
        #expect(run(square, [outside, inside, justOutside], rules: .none) == [.enter, .exit])
        #expect(run(square, [outside, inside, justOutside]) == [.enter], "5.6 m outside is within the margin")
        // With no margin at all, a fix on the north edge (not inside by the ring's rule) is out.
        #expect(run(square, [outside, inside, Coordinate(latitude: 52.52, longitude: 13.405)], rules: .none) == [.enter, .exit])
    }

    /// As for a circle, a fix coarser than half the polygon's size (half its smaller
    /// side) is inside with confidence when its centre is at least that far inside: small
    /// zones stay enterable with the fixes phones give indoors.
    @Test func aCoarseFixIsInsideASmallPolygonThroughItsInnerHalf() throws {
        // About 102 m east to west and 111 m north to south: a size of 51 m, a margin of 25 m.
        let square = try polygon([(13.400, 52.510), (13.4015, 52.510), (13.4015, 52.511), (13.400, 52.511)])
        let centre = Coordinate(latitude: 52.5105, longitude: 13.40075)
        let nearTheEdge = Coordinate(latitude: 52.5109, longitude: 13.40075)
        #expect(square.region.containment(of: centre, accuracy: 400, hysteresis: 10).relation == .inside, "51 m inside, 400 m capped at 25 m")
        #expect(square.region.containment(of: nearTheEdge, accuracy: 400, hysteresis: 10).relation == .uncertain, "11 m inside")
        #expect(square.region.containment(of: nearTheEdge, accuracy: 5, hysteresis: 10).relation == .inside)
    }

    @Test func aHoleIsOutside() throws {
        let ring = try polygon(
            [(13.40, 52.51), (13.42, 52.51), (13.42, 52.53), (13.40, 52.53)],
            holes: [[(13.405, 52.515), (13.415, 52.515), (13.415, 52.525), (13.405, 52.525)]])
        #expect(run(ring, [Coordinate(latitude: 52.50, longitude: 13.41), Coordinate(latitude: 52.512, longitude: 13.41), Coordinate(latitude: 52.52, longitude: 13.41)]) == [.enter, .exit])
    }

    @Test func aRingAcrossTheAntimeridian() throws {
        let fiji = try polygon([(179.9, -16.6), (-179.9, -16.6), (-179.9, -16.4), (179.9, -16.4)])
        #expect(run(fiji, [
            Coordinate(latitude: -17, longitude: 179.95), Coordinate(latitude: -16.5, longitude: -179.95),
            Coordinate(latitude: -16.5, longitude: 179.95), Coordinate(latitude: -16.5, longitude: 179.8),
        ]) == [.enter, .exit])
    }
}
