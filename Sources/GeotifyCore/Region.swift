/// The area a fence covers.
///
/// A circle is the app's geotification: a centre and a radius in metres, measured on
/// the WGS84 ellipsoid.
public enum Region: Sendable, Hashable {
    case circle(center: Coordinate, radius: Double)

    /// A box that contains the whole region, for cheap rejection of far-away fixes.
    public var boundingBox: BoundingBox {
        switch self {
        case .circle(let center, let radius):
            BoundingBox.around(center, radius: radius)
        }
    }

    /// Whether `point` lies in the region (on the edge counts as inside).
    ///
    /// The cheap spherical distance decides whenever it is farther from the edge than
    /// its error bound; only points within that band pay for the ellipsoidal distance.
    @inlinable
    public func contains(_ point: Coordinate) -> Bool {
        switch self {
        case .circle(let center, let radius):
            let spherical = Geodesy.sphericalDistance(center, point)
            let bound = Geodesy.sphericalErrorBound(forDistance: spherical)
            if spherical + bound < radius { return true }
            if spherical - bound > radius { return false }
            return Geodesy.distance(center, point) <= radius
        }
    }
}
