import Foundation
import GeotifyTestSupport
import Testing

@testable import GeotifyCore

/// A polygon's `InteriorDisc` only ever says "inside by at least the margin" where the
/// polygon's own checks say so too (the ray crossing and the planar bracket), at every
/// latitude it is made for, with holes and across the antimeridian; and it does decide
/// fixes deep inside, which is what it is for.
@Suite("Interior disc")
struct InteriorDiscTests {
    @Test("the disc says inside only where ray crossing and bracket say inside by the margin")
    func theDiscIsSound() throws {
        var random = SplitMix64(seed: 12)
        var decided = 0
        var checked = 0
        for polygon in RandomPolygons.stars(&random) {
            guard let disc = polygon.withGeometry({ InteriorDisc($0, center: polygon.center) }) else { continue }
            let box = polygon.boundingBox
            var span = box.maxLongitude - box.minLongitude
            if span < 0 { span += 360 }
            for _ in 0..<200 {
                let point = Coordinate(
                    latitude: box.minLatitude + (box.maxLatitude - box.minLatitude) * random.unit(),
                    longitude: Coordinate.wrappedLongitude(box.minLongitude + span * random.unit()))
                let cosine = cos(point.latitude * (Double.pi / 180))
                for margin in [0, 0.5, 5, 30, 300, 3_000] {
                    checked += 1
                    guard disc.holdsInside(point, cosine: cosine, margin: margin) else { continue }
                    decided += 1
                    #expect(polygon.contains(point))
                    #expect(margin == 0 || polygon.boundaryDistance(of: point, isAtLeast: margin))
                    #expect(margin == 0 || polygon.distanceToBoundary(point) >= margin)
                }
            }
        }
        // Deep inside is common: a disc that never decided would save nothing.
        #expect(decided > checked / 10)
    }

    @Test("a fix at the centre of a square decides; one by its edge, or beyond the margin, does not")
    func theCentreDecidesTheEdgeDoesNot() throws {
        let center = Coordinate(latitude: 48.2, longitude: 16.37)
        let polygon = try Polygon(outer: RandomPolygons.square(around: center, half: 500))
        let disc = try #require(polygon.withGeometry { InteriorDisc($0, center: polygon.center) })
        let cosine = { (point: Coordinate) in cos(point.latitude * (Double.pi / 180)) }
        #expect(disc.holdsInside(center, cosine: cosine(center), margin: 30))
        let nearEdge = center.offset(north: 480, east: 0)
        #expect(!disc.holdsInside(nearEdge, cosine: cosine(nearEdge), margin: 30))
        #expect(!disc.holdsInside(center, cosine: cosine(center), margin: 600))
        let outside = center.offset(north: 700, east: 0)
        #expect(!disc.holdsInside(outside, cosine: cosine(outside), margin: 0))
    }

    @Test("no disc beyond 80° of latitude or for a polygon wider than 25 km")
    func noDiscWhereTheBracketIsNotProven() throws {
        let polar = try Polygon(outer: RandomPolygons.square(around: Coordinate(latitude: 80.1, longitude: 10), half: 300))
        #expect(polar.withGeometry { InteriorDisc($0, center: polar.center) } == nil)
        let wide = try Polygon(outer: RandomPolygons.square(around: Coordinate(latitude: 10, longitude: 10), half: 10_000))
        #expect(wide.withGeometry { InteriorDisc($0, center: wide.center) } == nil)
    }
}
