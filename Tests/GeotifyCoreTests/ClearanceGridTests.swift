import Foundation
import GeotifyTestSupport
import Testing

@testable import GeotifyCore

/// A polygon's `ClearanceGrid` only ever decides a fix as the polygon's own checks do
/// (`PolygonGeometry.containment`: the ray crossing, then the planar bracket), inside
/// and outside, for every accuracy and hysteresis, at every latitude it is made for,
/// with holes and across the antimeridian; and it does decide many fixes near the
/// edges, which is what it is for.
@Suite("Clearance grid")
struct ClearanceGridTests {
    /// What the grid of `polygon` decides for each of `points` with these margins, nil
    /// where it has no grid or leaves the point to the edges.
    private func relations(
        _ polygon: Polygon, _ points: [(point: Coordinate, insideMargin: Double, outsideMargin: Double)]
    ) -> [Containment.Relation?] {
        guard let words = polygon.withGeometry(ClearanceGrid.words) else { return points.map { _ in nil } }
        return words.withUnsafeBufferPointer { words in
            points.map { point, insideMargin, outsideMargin in
                ClearanceGrid(words: words).relation(
                    of: point, cosine: cos(point.latitude * (Double.pi / 180)), insideMargin: insideMargin, outsideMargin: outsideMargin)
            }
        }
    }

    private func relation(
        _ polygon: Polygon, _ point: Coordinate, insideMargin: Double, outsideMargin: Double
    ) -> Containment.Relation? {
        relations(polygon, [(point, insideMargin, outsideMargin)])[0]
    }

    @Test("the grid decides only as ray crossing and bracket decide, inside and outside")
    func theGridIsSound() throws {
        var random = SplitMix64(seed: 31)
        var decided: [Containment.Relation: Int] = [:]
        var checked = 0
        var wrong: [String] = []
        for polygon in RandomPolygons.stars(&random) {
            let box = polygon.boundingBox
            var span = box.maxLongitude - box.minLongitude
            if span < 0 { span += 360 }
            let size = Region.polygon(polygon).size
            var cases: [(point: Coordinate, accuracy: Double, hysteresis: Double)] = []
            for _ in 0..<100 {
                // The box and a little beyond it.
                let point = Coordinate(
                    latitude: box.minLatitude + (box.maxLatitude - box.minLatitude) * (1.1 * random.unit() - 0.05),
                    longitude: Coordinate.wrappedLongitude(box.minLongitude + span * (1.1 * random.unit() - 0.05)))
                for (accuracy, hysteresis) in [(0.0, 0.0), (0.5, 0), (5, 10), (30, 20), (300, 50), (3_000, 0)] {
                    cases.append((point, accuracy, hysteresis))
                }
            }
            let decisions = relations(polygon, cases.map { ($0.point, min($0.accuracy, size / 2), $0.hysteresis + $0.accuracy) })
            for ((point, accuracy, hysteresis), relation) in zip(cases, decisions) {
                checked += 1
                guard let relation else { continue }
                decided[relation, default: 0] += 1
                let exact = polygon.containment(of: point, accuracy: accuracy, hysteresis: hysteresis, size: size).relation
                if relation != exact { wrong.append("\(point) \(accuracy) \(hysteresis): \(relation), edges \(exact)") }
            }
        }
        let first = wrong.first ?? "none"
        #expect(wrong.count == 0, "\(wrong.count) of \(checked) decided otherwise, the first: \(first)")
        // Both sides decided often: a grid that never decided would save nothing.
        #expect(decided[.inside, default: 0] > checked / 10)
        #expect(decided[.outside, default: 0] > checked / 10)
    }

    @Test("a fix on the edge of a square, or not inside by the margin, is left to the edges")
    func theEdgeIsLeftToTheEdges() throws {
        let center = Coordinate(latitude: 48.2, longitude: 16.37)
        let polygon = try Polygon(outer: RandomPolygons.square(around: center, half: 500))
        let inside = center.offset(north: 300, east: 300)
        #expect(relation(polygon, inside, insideMargin: 30, outsideMargin: 30) == .inside)
        #expect(relation(polygon, inside, insideMargin: 600, outsideMargin: 30) == nil)
        let byTheEdge = center.offset(north: 500, east: 300)
        #expect(relation(polygon, byTheEdge, insideMargin: 0, outsideMargin: 0) == nil)
        let beyond = center.offset(north: 700, east: 0)
        #expect(relation(polygon, beyond, insideMargin: 0, outsideMargin: 0) == nil)
    }

    @Test("no grid beyond 80° of latitude or for a polygon wider than 25 km")
    func noGridWhereTheBracketIsNotProven() throws {
        let polar = try Polygon(outer: RandomPolygons.square(around: Coordinate(latitude: 80.1, longitude: 10), half: 300))
        #expect(polar.withGeometry(ClearanceGrid.words) == nil)
        let wide = try Polygon(outer: RandomPolygons.square(around: Coordinate(latitude: 10, longitude: 10), half: 10_000))
        #expect(wide.withGeometry(ClearanceGrid.words) == nil)
    }
}
