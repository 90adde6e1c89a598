import Foundation
import GeotifyCore

/// Makes realistic synthetic fences: circles of 50 m to 5 km (log-uniform, so small
/// home and shop fences are as common as district-sized ones) and polygons of 4 to 64
/// vertices of the same sizes, irregular but simple (star-shaped around their centre).
struct FenceFactory {
    /// The share of fences that are polygons.
    var polygonShare: Double
    /// The smallest and largest radius in metres.
    var radii: ClosedRange<Double> = 50...5_000

    /// A fence named `identifier` centred at `center`, notifying on entry and exit.
    func fence(_ identifier: String, at center: Coordinate, _ random: inout SeededRandom) -> Fence {
        let radius = random.logUniform(radii.lowerBound, radii.upperBound)
        let eventType: EventType = [.onEntry, .onExit]
        if random.unit() < polygonShare, let polygon = FenceFactory.polygon(around: center, radius: radius, &random) {
            return Fence(identifier: identifier, region: .polygon(polygon), note: "", eventType: eventType)
        }
        return Fence(identifier: identifier, region: .circle(center: center, radius: radius), note: "", eventType: eventType)
    }

    /// A simple polygon of 4–64 vertices at sorted angles around `center`, each at 60–100 %
    /// of `radius`; nil where no such ring is valid (one that would circle a pole).
    static func polygon(around center: Coordinate, radius: Double, _ random: inout SeededRandom) -> Polygon? {
        let vertexCount = 4 + random.below(61)
        let angles = (0..<vertexCount).map { _ in random.uniform(0...(2 * Double.pi)) }.sorted()
        let ring = angles.map { angle in
            Sphere.destination(from: center, distance: radius * random.uniform(0.6...1), bearing: angle)
        }
        return try? Polygon(outer: ring)
    }
}
