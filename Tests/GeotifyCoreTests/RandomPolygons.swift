import Foundation
import GeotifyCore
import GeotifyTestSupport

/// Random polygons for the tests of the shortcuts that decide a fix without a polygon's
/// edges (`InteriorDisc`, `ClearanceGrid`): star-shaped rings and squares.
enum RandomPolygons {
    /// A star-shaped ring of `count` vertices at 60–100 % of `radius` metres around `center`.
    private static func star(around center: Coordinate, radius: Double, count: Int, _ random: inout SplitMix64) -> [Coordinate] {
        (0..<count).map { _ in 2 * Double.pi * random.unit() }.sorted().map { angle in
            let reach = radius * (0.6 + 0.4 * random.unit())
            return center.offset(north: reach * sin(angle), east: reach * cos(angle))
        }
    }

    /// A square of half-side `half` metres around `center`.
    static func square(around center: Coordinate, half: Double) -> [Coordinate] {
        [(-half, -half), (-half, half), (half, half), (half, -half)].map { center.offset(north: $0.0, east: $0.1) }
    }

    /// 600 stars of 30 m to 8 km, some with a hole, some across the antimeridian, from the
    /// equator to 80°.
    static func stars(_ random: inout SplitMix64) -> [Polygon] {
        (0..<600).compactMap { index in
            let latitude = index % 10 == 0 ? 79.9 * (random.unit() < 0.5 ? 1 : -1) : 159 * random.unit() - 79.5
            let longitude = index % 7 == 0 ? 179.99 : 360 * random.unit() - 180
            let center = Coordinate(latitude: latitude, longitude: longitude)
            let radius = pow(10, 1.5 + 2.4 * random.unit())
            let outer = star(around: center, radius: radius, count: 4 + Int(random.unit() * 50), &random)
            let holes = index % 3 == 0 ? [square(around: center.offset(north: radius / 4, east: 0), half: radius / 10)] : []
            return try? Polygon(outer: outer, holes: holes)
        }
    }
}
