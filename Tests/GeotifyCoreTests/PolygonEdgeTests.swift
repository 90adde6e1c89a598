import Foundation
import GeotifyCore
import Testing

/// Polygons whose edges cross or touch are refused with the edges and the point, whatever
/// their symmetry; simple ones, however large, are accepted.
@Suite("Polygon edges")
struct PolygonEdgeTests {
    /// A ring from (latitude, longitude) pairs.
    private func ring(_ vertices: [(Double, Double)]) -> [Coordinate] {
        vertices.map { Coordinate(latitude: $0.0, longitude: $0.1) }
    }

    private func failure(_ outer: [Coordinate], holes: [[Coordinate]] = []) -> PolygonError? {
        do {
            _ = try Polygon(outer: outer, holes: holes)
            return nil
        } catch {
            return error
        }
    }

    private func edge(_ ring: PolygonError.Ring, _ from: Int, _ to: Int) -> PolygonError.Edge {
        PolygonError.Edge(ring: ring, from: from, to: to)
    }

    private func edge(_ from: Int, _ to: Int) -> PolygonError.Edge {
        edge(.outer, from, to)
    }

    @Test func aSymmetricBowTieIsRefusedForItsCrossingNotAsFlat() {
        let error = failure(ring([(0, 0), (1, 1), (1, 0), (0, 1)]))
        #expect(error == .edgesIntersect(edge(0, 1), edge(2, 3), at: Coordinate(latitude: 0.5, longitude: 0.5)))
        #expect(error?.code == "polygon.edges_intersect")
        #expect(error?.message == "The edge from vertex 0 to vertex 1 of the outer ring and the edge from vertex 2 to vertex 3 of the outer ring cross or touch at latitude 0.5, longitude 0.5; edges may meet only where two neighbouring edges of a ring share their vertex.")
    }

    @Test func anAsymmetricBowTieIsRefused() {
        #expect(failure(ring([(0, 0), (2, 3), (2, 0), (0, 1)])) == .edgesIntersect(edge(0, 1), edge(2, 3), at: Coordinate(latitude: 0.5, longitude: 0.75)))
        // Closed, with the crossing far from the first vertex: the loop (0, 4) → (3, 4) →
        // (1, 5) → (1, 3) crosses its own edge from (0, 4) to (3, 4).
        let closed = ring([(0, 0), (0, 4), (3, 4), (1, 5), (1, 3), (0, 0)])
        #expect(failure(closed) == .edgesIntersect(edge(1, 2), edge(3, 4), at: Coordinate(latitude: 1, longitude: 4)))
    }

    @Test func aRingTouchingItselfOrDoublingBackIsRefused() {
        // A figure eight: the vertex (1, 1) is visited twice.
        let eight = failure(ring([(0, 0), (1, 1), (2, 0), (2, 2), (1, 1), (0, 2)]))
        if case .edgesIntersect(_, _, let at)? = eight {
            #expect(at == Coordinate(latitude: 1, longitude: 1))
        } else {
            Issue.record("a figure eight was accepted: \(String(describing: eight))")
        }
        // A spike from the southern side whose tip touches an edge along the northern
        // side, met by the sweep after both of the spike's edges, which reach that
        // edge's latitude only at the tip; and the same upside down.
        let touching: [(Double, Double)] = [(0, 0), (0, 0.5), (2, 1.5), (0, 1), (0, 3), (2, 3), (2, 1.2), (3, 0)]
        for side in [1.0, -1.0] {
            let touch = failure(ring(touching.map { (side * $0.0, $0.1) }))
            if case .edgesIntersect(_, _, let at)? = touch {
                #expect(at == Coordinate(latitude: side * 2, longitude: 1.5))
            } else {
                Issue.record("a spike touching another edge was accepted: \(String(describing: touch))")
            }
        }
        // A spike: out to (3, 0) and back along the same line to (2, 0).
        let spike = failure(ring([(0, 0), (1, 0), (3, 0), (2, 0), (2, 2)]))
        #expect(spike == .edgesIntersect(edge(1, 2), edge(2, 3), at: Coordinate(latitude: 2, longitude: 0)))
    }

    @Test func aHoleCrossingTheOuterRingIsRefused() {
        let outer = ring([(0, 0), (0, 4), (4, 4), (4, 0)])
        let crossing = ring([(1, 1), (1, 5), (2, 5), (2, 1)])
        if case .edgesIntersect(let first, let second, let at)? = failure(outer, holes: [crossing]) {
            #expect(first == edge(.outer, 1, 2) && second.ring == .hole(0))
            #expect(at.longitude == 4)
        } else {
            Issue.record("a hole crossing the outer ring was accepted")
        }
        #expect(failure(outer, holes: [ring([(1, 1), (1, 2), (2, 2), (2, 1)])]) == nil)
    }

    @Test func collinearRingsAreStillFlatAndRepeatedVerticesStillCountOnce() {
        #expect(failure(ring([(0, 0), (1, 1), (2, 2), (3, 3)])) == .zeroArea(ring: .outer))
        #expect(failure(ring([(0, 0), (0, 0), (0, 1), (1, 1), (1, 1), (1, 0), (0, 0)])) == nil)
        // Across the antimeridian, simple.
        #expect(failure(ring([(0.1, 179.8), (0.3, -179.9), (-0.2, -179.7), (-0.3, 179.9)])) == nil)
    }

    @Test func aLargeSimplePolygonIsAccepted() throws {
        // A 100 000-vertex boundary that wiggles like a coastline (a circle with a
        // wavy radius): a meridian crosses only a few of its edges, so the sweep is quick.
        let count = 100_000
        let vertices = (0..<count).map { index -> Coordinate in
            let angle = Double(index) / Double(count) * 2 * Double.pi
            let radius = 1 + 0.01 * sin(angle * 400) + 0.002 * sin(angle * 7_000)
            return Coordinate(latitude: radius * sin(angle), longitude: radius * cos(angle))
        }
        let polygon = try Polygon(outer: vertices)
        #expect(polygon.contains(Coordinate(latitude: 0, longitude: 0)))
    }

    @Test func aPathologicalSawtoothIsRefusedAsTooComplexRatherThanCheckedForever() {
        // Every edge spans the same longitudes, so every pair has to be looked at.
        let teeth = 8_000
        var vertices: [Coordinate] = []
        for index in 0..<teeth {
            vertices.append(Coordinate(latitude: Double(index) * 0.001, longitude: index % 2 == 0 ? 0 : 1))
        }
        vertices.append(Coordinate(latitude: Double(teeth) * 0.001, longitude: -1))
        vertices.append(Coordinate(latitude: 0, longitude: -1))
        #expect(failure(vertices) == .tooComplex(edges: teeth + 2))
    }
}
