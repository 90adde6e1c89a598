import Testing
import GeotifyCore

@Suite("Fence containment")
struct RegionTests {
    func circle(_ latitude: Double, _ longitude: Double, _ radius: Double) -> Fence {
        Fence(identifier: "f", region: .circle(center: Coordinate(latitude: latitude, longitude: longitude), radius: radius),
              note: "", eventType: .onEntry)
    }

    @Test func aroundTheNorthPole() {
        let fence = circle(89.999, 0, 1_000)
        #expect(fence.contains(Coordinate(latitude: 90, longitude: 0)))
        #expect(fence.contains(Coordinate(latitude: 89.9955, longitude: 180)))
        #expect(fence.contains(Coordinate(latitude: 89.999, longitude: -90)))
        #expect(!fence.contains(Coordinate(latitude: 89.985, longitude: 0)))
    }

    @Test func aroundTheSouthPole() {
        let fence = circle(-90, 0, 500)
        #expect(fence.contains(Coordinate(latitude: -89.996, longitude: 123)))
        #expect(!fence.contains(Coordinate(latitude: -89.994, longitude: -57)))
    }

    @Test func acrossTheAntimeridian() {
        let fence = circle(0, 179.9995, 200)
        #expect(fence.contains(Coordinate(latitude: 0, longitude: -179.9995)))
        #expect(fence.contains(Coordinate(latitude: 0.001, longitude: 180)))
        #expect(!fence.contains(Coordinate(latitude: 0, longitude: -179.997)))
        let west = circle(-16.5, -179.999, 1_000)
        #expect(west.contains(Coordinate(latitude: -16.5, longitude: 179.996)))
    }

    @Test func radiusZeroIsTheCentreOnly() {
        let fence = circle(52.52, 13.405, 0)
        #expect(fence.contains(Coordinate(latitude: 52.52, longitude: 13.405)))
        #expect(!fence.contains(Coordinate(latitude: 52.52001, longitude: 13.405)))
    }

    @Test func theEdgeIsDecidedOnTheEllipsoid() {
        // 1° of latitude along a meridian at the equator is 110 574.39 m on WGS84; a
        // sphere of mean radius says 111 195 m, so only the ellipsoid gets this right.
        let fence = circle(0, 0, 110_575)
        #expect(fence.contains(Coordinate(latitude: 1, longitude: 0)))
        #expect(!circle(0, 0, 110_574).contains(Coordinate(latitude: 1, longitude: 0)))
    }

    @Test func maximumRadius() {
        let fence = circle(52.52, 13.405, 100_000)
        #expect(fence.contains(Coordinate(latitude: 53.41, longitude: 13.405)))
        #expect(!fence.contains(Coordinate(latitude: 53.42, longitude: 13.405)))
        #expect(!fence.contains(Coordinate(latitude: -52.52, longitude: -166.595)))
    }
}
