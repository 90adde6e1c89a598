import Foundation
import GeotifyCore
import Testing

@Suite("BoundingBox")
struct BoundingBoxTests {
    private func box(_ minLatitude: Double, _ maxLatitude: Double, _ minLongitude: Double, _ maxLongitude: Double) -> BoundingBox {
        BoundingBox(minLatitude: minLatitude, maxLatitude: maxLatitude, minLongitude: minLongitude, maxLongitude: maxLongitude)
    }

    @Test("around contains GeographicLib points on and inside the circle (poles, antimeridian, 0 m to 1000 km)")
    func aroundContainsCirclePoints() {
        #expect(GeodesyReference.circlePoints.count > 1_000)
        for (centerLatitude, centerLongitude, radius, latitude, longitude) in GeodesyReference.circlePoints {
            let center = Coordinate(latitude: centerLatitude, longitude: centerLongitude)
            let bounds = BoundingBox.around(center, radius: radius)
            let point = Coordinate(latitude: latitude, longitude: longitude)
            #expect(bounds.contains(point), "radius \(radius) around \(center): \(bounds) misses \(point)")
            #expect(bounds.contains(center))
        }
    }

    @Test("around is not much larger than the circle away from the poles")
    func aroundIsTight() {
        for (centerLatitude, centerLongitude, radius, latitude, _) in GeodesyReference.circlePoints
        where abs(centerLatitude) <= 60 && radius > 0 && radius <= 100_000 {
            let bounds = BoundingBox.around(Coordinate(latitude: centerLatitude, longitude: centerLongitude), radius: radius)
            let halfHeight = (bounds.maxLatitude - bounds.minLatitude) / 2
            let metresPerDegree = 6_335_439.0 * .pi / 180
            #expect(halfHeight <= radius / metresPerDegree * 1.001 + 2e-9)
            #expect(halfHeight >= abs(latitude - centerLatitude))
            var halfWidth = (bounds.maxLongitude - bounds.minLongitude) / 2
            if bounds.crossesAntimeridian { halfWidth += 180 }
            let parallel = 6_378_137.0 * cos(centerLatitude * .pi / 180) * .pi / 180
            #expect(halfWidth <= radius / parallel * 1.04 + 2e-9, "\(bounds)")
        }
        let point = BoundingBox.around(Coordinate(latitude: 45, longitude: 7), radius: 0)
        #expect(point.maxLatitude - point.minLatitude < 1e-8)
        #expect(point.contains(Coordinate(latitude: 45, longitude: 7)))
        #expect(!point.contains(Coordinate(latitude: 45.000_001, longitude: 7)))
    }

    @Test("around spans all longitudes and reaches the pole when the circle may contain it")
    func aroundNearPoles() {
        let north = BoundingBox.around(Coordinate(latitude: 89.9, longitude: 10), radius: 100_000)
        #expect(north.maxLatitude == 90 && north.minLongitude == -180 && north.maxLongitude == 180)
        #expect(north.minLatitude > 88.99 && north.minLatitude < 89.01)
        let south = BoundingBox.around(Coordinate(latitude: -89.5, longitude: 100), radius: 100_000)
        #expect(south.minLatitude == -90 && south.minLongitude == -180 && south.maxLongitude == 180)
        let pole = BoundingBox.around(Coordinate(latitude: 90, longitude: 33), radius: 0)
        #expect(pole.contains(Coordinate(latitude: 90, longitude: -120)))
        let nearPole = BoundingBox.around(Coordinate(latitude: -89.5, longitude: 100), radius: 1)
        #expect(!nearPole.crossesAntimeridian && nearPole.maxLongitude - nearPole.minLongitude < 0.01)
        #expect(nearPole.minLatitude > -89.501)
    }

    @Test("around wraps across the antimeridian")
    func aroundAntimeridian() {
        let bounds = BoundingBox.around(Coordinate(latitude: 10, longitude: 179.9999), radius: 100_000)
        #expect(bounds.crossesAntimeridian)
        #expect(bounds.contains(Coordinate(latitude: 10, longitude: -179.2)))
        #expect(bounds.contains(Coordinate(latitude: 10, longitude: 179.2)))
        #expect(!bounds.contains(Coordinate(latitude: 10, longitude: 178.5)))
        #expect(!bounds.contains(Coordinate(latitude: 10, longitude: -178.5)))
        #expect(!bounds.contains(Coordinate(latitude: 10, longitude: 0)))
        let west = BoundingBox.around(Coordinate(latitude: -60, longitude: -180), radius: 1_000)
        #expect(west.crossesAntimeridian)
        #expect(west.contains(Coordinate(latitude: -60, longitude: 179.99)))
    }

    @Test("contains treats -180 and 180 as one meridian and handles wrapping boxes")
    func containsEdges() {
        let east = box(-10, 10, 170, 180)
        #expect(east.contains(Coordinate(latitude: 0, longitude: -180)))
        #expect(east.contains(Coordinate(latitude: 10, longitude: 170)))
        #expect(!east.contains(Coordinate(latitude: 10.001, longitude: 175)))
        #expect(!east.contains(Coordinate(latitude: 0, longitude: -179.9)))
        let west = box(-10, 10, -180, -170)
        #expect(west.contains(Coordinate(latitude: 0, longitude: 180)))
        let wrapping = box(-10, 10, 170, -170)
        #expect(wrapping.crossesAntimeridian)
        #expect(wrapping.contains(Coordinate(latitude: 0, longitude: 175)))
        #expect(wrapping.contains(Coordinate(latitude: 0, longitude: -175)))
        #expect(wrapping.contains(Coordinate(latitude: 0, longitude: 185)))
        #expect(!wrapping.contains(Coordinate(latitude: 0, longitude: 0)))
        #expect(!box(-10, 10, 0, 10).crossesAntimeridian)
    }

    @Test("intersects handles overlap, disjoint boxes, wrapping boxes and the ±180 seam")
    func intersects() {
        let middle = box(0, 10, 0, 10)
        #expect(middle.intersects(box(5, 15, 5, 15)))
        #expect(middle.intersects(box(10, 15, 10, 15)))
        #expect(!middle.intersects(box(11, 15, 5, 15)))
        #expect(!middle.intersects(box(0, 10, 11, 15)))
        let wrapping = box(0, 10, 170, -170)
        #expect(wrapping.intersects(box(0, 10, 175, 178)))
        #expect(wrapping.intersects(box(0, 10, -175, -160)))
        #expect(wrapping.intersects(box(0, 10, 160, 171)))
        #expect(!wrapping.intersects(box(0, 10, -160, 160)))
        #expect(wrapping.intersects(box(5, 6, 179, -179)))
        #expect(box(0, 10, 170, 180).intersects(box(0, 10, -180, -170)))
        #expect(!box(0, 10, 170, 179).intersects(box(0, 10, -179, -170)))
        #expect(BoundingBox.world.intersects(wrapping))
        #expect(wrapping.intersects(BoundingBox.world))
        #expect(!BoundingBox.empty.intersects(BoundingBox.world))
        #expect(!BoundingBox.world.intersects(BoundingBox.empty))
    }

    @Test("enclosing picks the smaller longitude span, wrapping across ±180")
    func enclosing() {
        let plain = BoundingBox.enclosing([
            Coordinate(latitude: 1, longitude: 10), Coordinate(latitude: -2, longitude: 12), Coordinate(latitude: 3, longitude: 11),
        ])
        #expect(plain == box(-2, 3, 10, 12))
        let crossing = BoundingBox.enclosing([
            Coordinate(latitude: 50, longitude: 179), Coordinate(latitude: 51, longitude: -179),
            Coordinate(latitude: 52, longitude: -178), Coordinate(latitude: 50, longitude: 178.5),
        ])
        #expect(crossing == box(50, 52, 178.5, -178))
        #expect(crossing.crossesAntimeridian)
        let single = BoundingBox.enclosing([Coordinate(latitude: 5, longitude: 6)])
        #expect(single == box(5, 5, 6, 6))
        let empty = BoundingBox.enclosing([])
        #expect(empty.isEmpty)
        #expect(!empty.contains(Coordinate(latitude: 0, longitude: 0)))
        #expect(empty.expanded(by: 1_000).isEmpty)
    }

    @Test("expanded contains every point within the distance of the box")
    func expanded() {
        // Each circle point is within its radius of the centre, so it lies within that
        // distance of any box containing the centre.
        for (centerLatitude, centerLongitude, radius, latitude, longitude) in GeodesyReference.circlePoints {
            let south = max(-90, centerLatitude - 0.05)
            let north = min(90, centerLatitude + 0.02)
            let west = Coordinate.wrappedLongitude(centerLongitude - 0.03)
            let east = Coordinate.wrappedLongitude(centerLongitude + 0.04)
            let bounds = box(south, north, west, east)
            #expect(bounds.contains(Coordinate(latitude: centerLatitude, longitude: centerLongitude)))
            let grown = bounds.expanded(by: radius)
            #expect(grown.contains(Coordinate(latitude: latitude, longitude: longitude)), "\(bounds) by \(radius)")
        }
        let unchanged = box(0, 1, 2, 3)
        #expect(unchanged.expanded(by: 0) == unchanged)
        #expect(unchanged.expanded(by: -5) == unchanged)
        let polar = box(80, 89, 0, 10).expanded(by: 200_000)
        #expect(polar.maxLatitude == 90 && polar.minLongitude == -180 && polar.maxLongitude == 180)
        #expect(polar.minLatitude > 78.1 && polar.minLatitude < 78.25)
        let wide = box(-10, 10, -170, 170).expanded(by: 2_000_000)
        #expect(wide.minLongitude == -180 && wide.maxLongitude == 180)
        let grownAcross = box(-1, 1, 170, 179.9).expanded(by: 50_000)
        #expect(grownAcross.crossesAntimeridian)
        #expect(grownAcross.contains(Coordinate(latitude: 0, longitude: -179.8)))
    }
}
