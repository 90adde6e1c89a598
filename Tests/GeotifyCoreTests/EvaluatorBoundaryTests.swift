import Foundation
import Testing

@testable import GeotifyCore

/// Fixes placed right at the thresholds the rules compare with, where the cheap
/// distance cannot decide and the evaluator must fall back to the exact one.
@Suite("Evaluator at the boundary")
struct EvaluatorBoundaryTests {
    let evaluator = Evaluator()
    let center = Coordinate(latitude: 47.3, longitude: 8.5)

    func fix(_ coordinate: Coordinate, at time: Double) -> Fix {
        Fix(device: "alice/phone", coordinate: coordinate, accuracy: 10, timestamp: time)
    }

    /// Two points due north of `center`, within `span` degrees, one ulp of latitude
    /// apart, on either side of where `measure` (monotonic northwards there) crosses
    /// `threshold`: `inner` is the one nearer the centre.
    func straddling(_ threshold: Double, within span: Double, _ measure: (Coordinate) -> Double) -> (inner: Coordinate, outer: Coordinate) {
        func point(_ latitude: Double) -> Coordinate { Coordinate(latitude: latitude, longitude: center.longitude) }
        let startsBelow = measure(center) < threshold
        var near = center.latitude
        var far = center.latitude + span
        while true {
            let middle = (near + far) / 2
            guard middle > near && middle < far else { break }
            if (measure(point(middle)) < threshold) == startsBelow { near = middle } else { far = middle }
        }
        return (point(near), point(far))
    }

    @Test("a circle's exit and entry thresholds, an ulp either side, decide as the exact distance does")
    func circleAtItsThresholds() {
        let fence = Fence(identifier: "office", region: .circle(center: center, radius: 200), note: "", eventType: [.onEntry, .onExit])
        // Exit beyond 200 + hysteresis 20 + accuracy 10; entry within 200 − 10.
        let exit = straddling(230, within: 0.1) { Geodesy.distance(center, $0) }
        let entry = straddling(190, within: 0.1) { Geodesy.distance(center, $0) }
        #expect(Geodesy.distance(center, exit.inner) <= 230 && Geodesy.distance(center, exit.outer) > 230)
        #expect(Geodesy.distance(center, entry.inner) <= 190 && Geodesy.distance(center, entry.outer) > 190)
        for point in [exit.inner, exit.outer, entry.inner, entry.outer] {
            #expect(!CircleDistance(center, point).bracketDecides(Geodesy.distance(center, point) > 210 ? 230 : 190))
        }
        var state = DeviceState()
        _ = evaluator.evaluate(fix(center, at: 1), fences: [fence], revision: 0, now: 1, state: &state)
        #expect(state.isInside("office"))
        let holding = evaluator.evaluate(fix(exit.inner, at: 2), fences: [fence], revision: 0, now: 2, state: &state)
        #expect(holding.transitions.isEmpty)
        let leaving = evaluator.evaluate(fix(exit.outer, at: 3), fences: [fence], revision: 0, now: 3, state: &state)
        #expect(leaving.transitions.map(\.kind) == [.exit])
        let notYet = evaluator.evaluate(fix(entry.outer, at: 4), fences: [fence], revision: 0, now: 4, state: &state)
        #expect(notYet.transitions.isEmpty)
        let entering = evaluator.evaluate(fix(entry.inner, at: 5), fences: [fence], revision: 0, now: 5, state: &state)
        #expect(entering.transitions.map(\.kind) == [.enter])
    }

    @Test("a polygon's entry margin, an ulp either side, decides as distanceToBoundary does")
    func polygonAtItsMargin() throws {
        let d = 0.01
        let polygon = try Polygon(outer: [
            Coordinate(latitude: center.latitude - d, longitude: center.longitude - d),
            Coordinate(latitude: center.latitude - d, longitude: center.longitude + d),
            Coordinate(latitude: center.latitude + d, longitude: center.longitude + d),
            Coordinate(latitude: center.latitude + d, longitude: center.longitude - d),
        ])
        let fence = Fence(identifier: "campus", region: .polygon(polygon), note: "", eventType: [.onEntry, .onExit])
        // Entry needs the fix inside by its accuracy, 10 m, from the northern edge.
        let margin = straddling(10, within: d) { polygon.distanceToBoundary($0) }
        #expect(polygon.distanceToBoundary(margin.inner) >= 10 && polygon.distanceToBoundary(margin.outer) < 10)
        for point in [margin.inner, margin.outer] {
            let bracket = try #require(polygon.planarBracket(point))
            #expect(bracket.lower < 10 && bracket.upper >= 10)
        }
        var state = DeviceState()
        let outside = Coordinate(latitude: center.latitude + 2 * d, longitude: center.longitude)
        _ = evaluator.evaluate(fix(outside, at: 1), fences: [fence], revision: 0, now: 1, state: &state)
        #expect(!state.isInside("campus"))
        let notYet = evaluator.evaluate(fix(margin.outer, at: 2), fences: [fence], revision: 0, now: 2, state: &state)
        #expect(notYet.transitions.isEmpty)
        let entering = evaluator.evaluate(fix(margin.inner, at: 3), fences: [fence], revision: 0, now: 3, state: &state)
        #expect(entering.transitions.map(\.kind) == [.enter])
    }
}
