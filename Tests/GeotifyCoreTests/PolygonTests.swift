import Foundation
import GeotifyCore
import GeotifyTestSupport
import Testing

@Suite("Polygon")
struct PolygonTests {
    /// A ring from (latitude, longitude) pairs.
    private func ring(_ vertices: [(Double, Double)]) -> [Coordinate] {
        vertices.map { Coordinate(latitude: $0.0, longitude: $0.1) }
    }

    private func at(_ latitude: Double, _ longitude: Double) -> Coordinate {
        Coordinate(latitude: latitude, longitude: longitude)
    }

    /// Geodesic distance from the point to the rings, each edge being a straight line in
    /// (unwrapped longitude, latitude): the closest of many points along every edge, refined
    /// around the best one.
    private func referenceDistance(_ point: Coordinate, _ rings: [[Coordinate]]) -> Double {
        var best = Double.infinity
        for vertices in rings {
            for index in vertices.indices {
                let a = vertices[index]
                let b = vertices[(index + 1) % vertices.count]
                var dLongitude = b.longitude - a.longitude
                if dLongitude > 180 { dLongitude -= 360 } else if dLongitude < -180 { dLongitude += 360 }
                func along(_ t: Double) -> Double {
                    Geodesy.distance(point, Coordinate(latitude: a.latitude + t * (b.latitude - a.latitude),
                                                       longitude: Coordinate.wrappedLongitude(a.longitude + t * dLongitude)))
                }
                let steps = 200
                var bestStep = 0
                var edgeBest = Double.infinity
                for step in 0...steps {
                    let d = along(Double(step) / Double(steps))
                    if d < edgeBest { edgeBest = d; bestStep = step }
                }
                for fine in -200...200 {
                    let t = (Double(bestStep) + Double(fine) / 200) / Double(steps)
                    if t >= 0 && t <= 1 { edgeBest = min(edgeBest, along(t)) }
                }
                best = min(best, edgeBest)
            }
        }
        return best
    }

    @Test("a simple square contains its inside and not its outside")
    func square() throws {
        let square = try Polygon(outer: ring([(0, 0), (0, 1), (1, 1), (1, 0)]))
        #expect(square.contains(at(0.5, 0.5)))
        #expect(square.contains(at(0.001, 0.999)))
        #expect(!square.contains(at(1.5, 0.5)))
        #expect(!square.contains(at(0.5, -0.001)))
        #expect(!square.contains(at(-0.5, 0.5)))
        #expect(square.boundingBox == BoundingBox(minLatitude: 0, maxLatitude: 1, minLongitude: 0, maxLongitude: 1))
        #expect(abs(square.center.latitude - 0.5) < 1e-12 && abs(square.center.longitude - 0.5) < 1e-12)
        let closed = try Polygon(outer: ring([(0, 0), (0, 1), (1, 1), (1, 0), (0, 0)]))
        #expect(closed.contains(at(0.5, 0.5)) && !closed.contains(at(1.5, 0.5)))
        #expect(closed.center == square.center)
        #expect(closed != square)
        // Closed twice (the closing vertex given again, as some editors write it): the
        // same square, its repeated vertex dropped and then its closing one.
        let closedTwice = try Polygon(outer: ring([(0, 0), (0, 1), (1, 1), (1, 0), (0, 0), (0, 0)]))
        #expect(closedTwice.contains(at(0.5, 0.5)) && !closedTwice.contains(at(1.5, 0.5)))
        #expect(closedTwice.center == square.center)
    }

    @Test("a concave polygon excludes its notch")
    func concave() throws {
        // A "U" opening north: the notch between longitudes 1 and 2 above latitude 1.
        let u = try Polygon(outer: ring([(0, 0), (0, 3), (3, 3), (3, 2), (1, 2), (1, 1), (3, 1), (3, 0)]))
        #expect(u.contains(at(0.5, 1.5)))
        #expect(u.contains(at(2, 0.5)))
        #expect(u.contains(at(2, 2.5)))
        #expect(!u.contains(at(2, 1.5)))
        #expect(!u.contains(at(2.9, 1.5)))
        #expect(!u.contains(at(4, 1.5)))
    }

    @Test("a hole is outside the polygon")
    func hole() throws {
        let donut = try Polygon(outer: ring([(46, 6), (46, 8), (48, 8), (48, 6)]),
                                holes: [ring([(46.5, 6.5), (47.5, 6.5), (47.5, 7.5), (46.5, 7.5), (46.5, 6.5)])])
        #expect(donut.contains(at(46.2, 7)))
        #expect(donut.contains(at(47, 7.8)))
        #expect(!donut.contains(at(47, 7)))
        #expect(!donut.contains(at(49, 7)))
        let inHole = at(47, 7)
        let toHole = donut.distanceToBoundary(inHole)
        let expected = referenceDistance(inHole, donut.holes)
        #expect(abs(toHole - expected) <= 0.005 * expected)
    }

    @Test("a ring crossing the antimeridian works on both sides")
    func antimeridian() throws {
        let fiji = try Polygon(outer: ring([(-18, 179), (-18, -179), (-16, -179), (-16, 179)]))
        #expect(fiji.boundingBox.crossesAntimeridian)
        #expect(fiji.contains(at(-17, 179.5)))
        #expect(fiji.contains(at(-17, -179.5)))
        #expect(fiji.contains(at(-17, 180)))
        #expect(fiji.contains(at(-17, -180)))
        #expect(!fiji.contains(at(-17, 178.9)))
        #expect(!fiji.contains(at(-17, -178.9)))
        #expect(!fiji.contains(at(-17, 0)))
        #expect(!fiji.contains(at(-17, 1)))
        #expect(abs(abs(fiji.center.longitude) - 180) < 1e-9)
        let started = try Polygon(outer: ring([(-16, -179), (-16, 179), (-18, 179), (-18, -179)]))
        #expect(started.contains(at(-17, 179.5)) && started.contains(at(-17, -179.5)) && !started.contains(at(-17, 178)))
        let point = at(-17, 179.95)
        let expected = Geodesy.distance(point, at(-17, 179))
        #expect(abs(fiji.distanceToBoundary(point) - expected) <= 0.005 * expected)
    }

    @Test("a ring near a pole that does not contain it")
    func nearPole() throws {
        let polar = try Polygon(outer: ring([(89.4, 10), (89.4, 20), (89.6, 20), (89.6, 10)]))
        #expect(polar.contains(at(89.5, 15)))
        #expect(!polar.contains(at(89.5, 25)))
        #expect(!polar.contains(at(89.5, -165)))
        #expect(!polar.contains(at(90, 15)))
        #expect(!polar.contains(at(89.3, 15)))
        for point in [at(89.45, 15), at(89.5, 15), at(89.58, 11), at(89.7, 15), at(89.5, 21)] {
            let expected = referenceDistance(point, [polar.outer])
            #expect(abs(polar.distanceToBoundary(point) - expected) <= 0.005 * expected, "\(point)")
        }
    }

    @Test("distanceToBoundary on known cases")
    func knownDistances() throws {
        let square = try Polygon(outer: ring([(0, 0), (0, 1), (1, 1), (1, 0)]))
        let middle = at(0.5, 0.5)
        let toSouth = Geodesy.distance(middle, at(0, 0.5))
        #expect(abs(square.distanceToBoundary(middle) - toSouth) <= 0.005 * toSouth)
        #expect(square.distanceToBoundary(at(0, 0.5)) < 1e-6)
        #expect(square.distanceToBoundary(at(0, 0)) < 1e-6)
        let outsideCorner = at(-0.01, -0.01)
        let toCorner = Geodesy.distance(outsideCorner, at(0, 0))
        #expect(abs(square.distanceToBoundary(outsideCorner) - toCorner) <= 0.005 * toCorner)

        let alpine = try Polygon(outer: ring([(45, 7), (45, 7.3), (45.2, 7.3), (45.2, 7)]))
        let inside = at(45.05, 7.1)
        let toEdge = Geodesy.distance(inside, at(45, 7.1))
        #expect(abs(alpine.distanceToBoundary(inside) - toEdge) <= 0.005 * toEdge)
        let outside = at(45.1, 7.35)
        let toEast = Geodesy.distance(outside, at(45.1, 7.3))
        #expect(abs(alpine.distanceToBoundary(outside) - toEast) <= 0.005 * toEast)
    }

    @Test("distanceToBoundary is within 0.5 % of the geodesic distance to densely sampled edges")
    func distanceAgainstDenseSampling() throws {
        let rings: [[Coordinate]] = [
            ring([(51.4, -0.3), (51.45, 0.1), (51.6, 0.05), (51.55, -0.25)]),
            ring([(-34.0, 150.9), (-33.7, 151.4), (-33.95, 151.2)]),
            ring([(69.5, 18.7), (69.8, 19.2), (69.7, 18.6)]),
            ring([(0.1, 179.8), (0.3, -179.9), (-0.2, -179.7), (-0.3, 179.9)]),
            ring([(79.9, 10.0), (80.1, 10.5), (80.2, 9.9)]),
        ]
        var random = SplitMix64(seed: 99)
        for vertices in rings {
            let polygon = try Polygon(outer: vertices)
            for _ in 0..<12 {
                let c = polygon.center
                let point = at(c.latitude + Double.random(in: -0.3...0.3, using: &random),
                               Coordinate.wrappedLongitude(c.longitude + Double.random(in: -0.5...0.5, using: &random)))
                let expected = referenceDistance(point, [vertices])
                let ours = polygon.distanceToBoundary(point)
                #expect(abs(ours - expected) <= 0.005 * expected + 0.01, "\(point): \(ours) vs \(expected)")
            }
        }
    }

    @Test("bad rings are refused with a specific error")
    func errors() {
        func failure(_ outer: [Coordinate], holes: [[Coordinate]] = []) -> PolygonError? {
            do {
                _ = try Polygon(outer: outer, holes: holes)
                return nil
            } catch {
                return error
            }
        }
        #expect(failure(ring([(0, 0), (0, 1)])) == .tooFewVertices(ring: .outer, distinct: 2))
        #expect(failure(ring([(0, 0), (0, 1), (0, 0)])) == .tooFewVertices(ring: .outer, distinct: 2))
        #expect(failure(ring([(0, 0), (0, 1), (0, 1), (0, 0)])) == .tooFewVertices(ring: .outer, distinct: 2))
        #expect(failure([]) == .tooFewVertices(ring: .outer, distinct: 0))
        #expect(failure(ring([(0, 0), (91, 1), (1, 1)])) == .vertexOutOfRange(ring: .outer, index: 1, vertex: at(91, 1)))
        #expect(failure(ring([(0, 0), (1, 1), (1, 200)])) == .vertexOutOfRange(ring: .outer, index: 2, vertex: at(1, 200)))
        if case .vertexOutOfRange(.outer, 0, _) = failure(ring([(.nan, 0), (1, 1), (1, 2)])) {} else {
            Issue.record("NaN vertex accepted")
        }
        #expect(failure(ring([(0, 0), (0, 120), (1, -120)])) == .longitudeSpanTooWide(ring: .outer, span: 240))
        #expect(failure(ring([(0, -100), (0, 100), (1, 100)])) == nil) // spans 160° across ±180
        #expect(failure(ring([(0, 10), (1, 100), (0, -80)])) == nil) // spans exactly 180°
        #expect(failure(ring([(0, 10), (1, 100.5), (0, -80)])) == .longitudeSpanTooWide(ring: .outer, span: 180.5))
        #expect(failure(ring([(0, 0), (1, 1), (2, 2)])) == .zeroArea(ring: .outer))
        let outer = ring([(0, 0), (0, 1), (1, 1), (1, 0)])
        #expect(failure(outer, holes: [ring([(0.5, 0.5), (0.6, 0.6)])]) == .tooFewVertices(ring: .hole(0), distinct: 2))
        let error = PolygonError.longitudeSpanTooWide(ring: .hole(2), span: 200)
        #expect(error.code == "polygon.longitude_span_too_wide")
        // Each ring named as a sentence needs it, at its start or inside.
        #expect(error.message == "Hole 2 spans 200.0° of longitude; a ring may span at most 180°.")
        #expect(PolygonError.longitudeSpanTooWide(ring: .outer, span: 240).message == "The outer ring spans 240.0° of longitude; a ring may span at most 180°.")
        #expect(PolygonError.zeroArea(ring: .hole(0)).description == "The vertices of hole 0 all lie on one line, so it encloses no area.")
        #expect(PolygonError.zeroArea(ring: .outer).description == "The vertices of the outer ring all lie on one line, so it encloses no area.")
        #expect(PolygonError.vertexOutOfRange(ring: .hole(1), index: 3, vertex: at(91, 1)).message
            == "Vertex 3 of hole 1 (latitude 91.0, longitude 1.0) is out of range: latitude must be in -90...90 and longitude in -180...180.")
    }
}
