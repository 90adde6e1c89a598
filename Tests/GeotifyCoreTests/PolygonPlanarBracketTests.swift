import Foundation
import GeotifyTestSupport
import Testing

@testable import GeotifyCore

@Suite("Polygon planar bracket")
struct PolygonPlanarBracketTests {
    /// A star-shaped ring of `count` vertices at 60–100 % of `radius` metres around `center`.
    private func star(around center: Coordinate, radius: Double, count: Int, _ random: inout SplitMix64) throws -> Polygon {
        let angles = (0..<count).map { _ in 2 * Double.pi * random.unit() }.sorted()
        let ring = angles.map { angle in
            let reach = radius * (0.6 + 0.4 * random.unit())
            return center.offset(north: reach * sin(angle), east: reach * cos(angle))
        }
        return try Polygon(outer: ring)
    }

    @Test("edges skipped by their box change nothing: the planar distance is every edge's minimum, to the bit")
    func skippedEdgesChangeNothing() throws {
        var random = SplitMix64(seed: 23)
        var compared = 0
        for _ in 0..<300 {
            let center = Coordinate(latitude: 160 * random.unit() - 80, longitude: 360 * random.unit() - 180)
            let radius = pow(10, 1 + 3.7 * random.unit())
            guard let polygon = try? star(around: center, radius: radius, count: 4 + Int(random.unit() * 60), &random) else { continue }
            let reference = polygon.withGeometry(\.referenceLongitude)
            let ring = (polygon.outer + [polygon.outer[0]]).map { (x: PolygonGeometry.unwrap($0.longitude, against: reference), y: $0.latitude) }
            for _ in 0..<20 {
                let x = PolygonGeometry.unwrap(center.longitude, against: reference) + radius * 3e-5 * (random.unit() - 0.5)
                let y = center.latitude + radius * 3e-5 * (random.unit() - 0.5)
                let (scaleX, scaleY) = (111_000 * cos(y * .pi / 180), 111_000.0)
                // Every edge, as `planarNearest` computes one, none skipped.
                var best = Double.infinity
                for (start, end) in zip(ring, ring.dropFirst()) {
                    let ax = (start.x - x) * scaleX, ay = (start.y - y) * scaleY
                    let dx = (end.x - start.x) * scaleX, dy = (end.y - start.y) * scaleY
                    let lengthSquared = dx * dx + dy * dy
                    let t = min(1, max(0, lengthSquared > 0 ? -(ax * dx + ay * dy) / lengthSquared : 0))
                    let (px, py) = (ax + t * dx, ay + t * dy)
                    best = min(best, px * px + py * py)
                }
                let distance = polygon.withGeometry { $0.planarDistance(x: x, y: y, metresPerDegreeX: scaleX, metresPerDegreeY: scaleY) }
                #expect(distance.bitPattern == best.squareRoot().bitPattern)
                let limit = best.squareRoot() * 2 * random.unit()
                let limited = polygon.withGeometry {
                    $0.planarDistance(x: x, y: y, metresPerDegreeX: scaleX, metresPerDegreeY: scaleY, limit: limit)
                }
                #expect(limited == min(limit, best.squareRoot()))
                compared += 1
            }
        }
        #expect(compared > 4_000)
    }

    @Test("the bracket holds distanceToBoundary at every latitude to 80°, with at least a factor 2 to spare")
    func bracketHoldsTheDistance() throws {
        var random = SplitMix64(seed: 5)
        var worst = 0.0
        var bracketed = 0
        for _ in 0..<3_000 {
            let center = Coordinate(latitude: 160 * random.unit() - 80, longitude: 360 * random.unit() - 180)
            let radius = pow(10, 1 + 3.7 * random.unit())
            guard let polygon = try? star(around: center, radius: radius, count: 4 + Int(random.unit() * 40), &random) else { continue }
            for _ in 0..<10 {
                let reach = radius * 3 * random.unit()
                let angle = 2 * Double.pi * random.unit()
                let point = center.offset(north: reach * sin(angle), east: reach * cos(angle))
                guard let bracket = polygon.planarBracket(point) else { continue }
                let distance = polygon.distanceToBoundary(point)
                #expect(bracket.lower <= distance && distance <= bracket.upper, "\(point): \(distance) not in \(bracket) radius \(radius) center \(center)")
                let planar = (bracket.lower + bracket.upper) / 2
                let halfWidth = (bracket.upper - bracket.lower) / 2
                if halfWidth > 0 { worst = max(worst, abs(distance - planar) / halfWidth) }
                bracketed += 1
            }
        }
        #expect(bracketed > 20_000)
        #expect(worst <= 0.5, "largest |distance − planar| / bound: \(worst)")
    }

    @Test("margins at the distance fall back to distanceToBoundary and answer as it does")
    func marginsAtTheBoundaryFallBack() throws {
        var random = SplitMix64(seed: 9)
        var fellBack = 0
        var decided = 0
        for _ in 0..<500 {
            let center = Coordinate(latitude: 140 * random.unit() - 70, longitude: 360 * random.unit() - 180)
            let radius = pow(10, 2 + 2 * random.unit())
            guard let polygon = try? star(around: center, radius: radius, count: 12, &random) else { continue }
            let point = center.offset(north: radius * (2 * random.unit() - 1), east: radius * (2 * random.unit() - 1))
            let distance = polygon.distanceToBoundary(point)
            for margin in [distance, distance.nextUp, distance.nextDown, distance * 1.000_001, distance * 0.999_999, distance * 2, distance / 2] {
                let bracket = polygon.planarBracket(point)
                if let bracket, bracket.lower >= margin || bracket.upper < margin { decided += 1 } else { fellBack += 1 }
                #expect(polygon.boundaryDistance(of: point, isAtLeast: margin) == (distance >= margin))
                #expect(polygon.boundaryDistance(of: point, exceeds: margin) == (distance > margin))
            }
        }
        #expect(decided > 500 && fellBack > 500)
    }

    @Test("no bracket beyond 80° of latitude or 30 km from the boundary")
    func noBracketOutsideItsProof() throws {
        var random = SplitMix64(seed: 3)
        let polar = try star(around: Coordinate(latitude: 85, longitude: 10), radius: 1_000, count: 8, &random)
        #expect(polar.planarBracket(Coordinate(latitude: 85, longitude: 10)) == nil)
        let small = try star(around: Coordinate(latitude: 10, longitude: 10), radius: 1_000, count: 8, &random)
        #expect(small.planarBracket(Coordinate(latitude: 10.5, longitude: 10)) == nil)
        #expect(small.planarBracket(Coordinate(latitude: 10.01, longitude: 10)) != nil)
    }
}
