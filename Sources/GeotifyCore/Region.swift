import Foundation

/// The area a fence covers.
///
/// A circle is the app's geotification: a centre and a radius in metres, measured on
/// the WGS84 ellipsoid. A polygon is an outer ring with optional holes (GeoJSON-style),
/// which may cross the ±180° meridian.
public enum Region: Sendable, Hashable {
    case circle(center: Coordinate, radius: Double)
    case polygon(Polygon)

    /// A box that contains the whole region, for cheap rejection of far-away fixes.
    public var boundingBox: BoundingBox {
        switch self {
        case .circle(let center, let radius): BoundingBox.around(center, radius: radius)
        case .polygon(let polygon): polygon.boundingBox
        }
    }

    /// The region's characteristic radius in metres: a circle's radius; for a polygon,
    /// half the smaller side of its bounding box. Scales the default hysteresis and caps
    /// how much accuracy an entry demands.
    public var size: Double {
        switch self {
        case .circle(_, let radius):
            return radius
        case .polygon(let polygon):
            let box = polygon.boundingBox
            let height = (box.maxLatitude - box.minLatitude) * Geodesy.meridionalRadius(atLatitude: polygon.center.latitude) * .pi / 180
            var span = box.maxLongitude - box.minLongitude
            if span < 0 { span += 360 }
            let width = span * Geodesy.parallelRadius(atLatitude: polygon.center.latitude) * .pi / 180
            return min(height, width) / 2
        }
    }

    /// The centre of a circle, a representative point of a polygon.
    public var center: Coordinate {
        switch self {
        case .circle(let center, _): center
        case .polygon(let polygon): polygon.center
        }
    }

    /// Whether `point` lies in the region (on a circle's edge counts as inside).
    @inlinable
    public func contains(_ point: Coordinate) -> Bool {
        switch self {
        case .circle(let center, let radius):
            var distance = CircleDistance(center, point)
            return distance.isAtMost(radius)
        case .polygon(let polygon):
            return polygon.contains(point)
        }
    }

    /// The distance in metres from `point` to the region's edge: negative inside,
    /// positive outside (for a preview's "how far in or out").
    public func signedDistance(to point: Coordinate) -> Double {
        switch self {
        case .circle(let center, let radius):
            return Geodesy.distance(center, point) - radius
        case .polygon(let polygon):
            let distance = polygon.distanceToBoundary(point)
            return polygon.contains(point) ? -distance : distance
        }
    }

    /// Where a fix with uncertainty `accuracy` (metres, already 0 when accuracy is not to
    /// be used) lies relative to the region, with an exit margin of `hysteresis` metres.
    /// See `Containment` for the rule.
    @inlinable
    public func containment(of point: Coordinate, accuracy: Double, hysteresis: Double) -> Containment {
        containment(of: point, accuracy: accuracy, hysteresis: hysteresis, size: size)
    }

    /// `containment`, given the region's `size` (which a `Fence` computes once).
    @inlinable
    public func containment(of point: Coordinate, accuracy: Double, hysteresis: Double, size: Double) -> Containment {
        switch self {
        case .circle(let center, let radius):
            var distance = CircleDistance(center, point)
            return Region.circleContainment(&distance, radius: radius, accuracy: accuracy, hysteresis: hysteresis)
        case .polygon(let polygon):
            return polygon.containment(of: point, accuracy: accuracy, hysteresis: hysteresis, size: size)
        }
    }

    /// `containment` for a circle of `radius` metres, given the distance from its centre
    /// to the point (which callers may have set up with precomputed cosines).
    @inlinable
    public static func circleContainment(
        _ distance: inout CircleDistance, radius: Double, accuracy: Double, hysteresis: Double
    ) -> Containment {
        let centreInside = distance.isAtMost(radius)
        if centreInside && distance.isAtMost(radius - min(accuracy, radius / 2)) {
            return Containment(relation: .inside)
        }
        if !centreInside && !distance.isAtMost(radius + hysteresis + accuracy) {
            return Containment(relation: .outside)
        }
        return Containment(relation: .uncertain)
    }
}
