import Foundation

/// A latitude/longitude box that contains a region, used to reject far-away fences with a
/// few comparisons and by spatial indexes.
///
/// Longitudes are in -180...180. When `minLongitude > maxLongitude` the box crosses the
/// antimeridian: it spans `minLongitude...180` and `-180...maxLongitude`. A box with
/// `minLatitude > maxLatitude` is empty (see `empty`).
public struct BoundingBox: Sendable, Hashable {
    /// Southern edge in degrees.
    public var minLatitude: Double
    /// Northern edge in degrees.
    public var maxLatitude: Double
    /// Western edge in degrees (east of `maxLongitude` when the box crosses the antimeridian).
    public var minLongitude: Double
    /// Eastern edge in degrees.
    public var maxLongitude: Double

    /// Creates a box from its edges in degrees; `minLongitude > maxLongitude` means the box
    /// crosses the antimeridian.
    @inlinable
    public init(minLatitude: Double, maxLatitude: Double, minLongitude: Double, maxLongitude: Double) {
        self.minLatitude = minLatitude
        self.maxLatitude = maxLatitude
        self.minLongitude = minLongitude
        self.maxLongitude = maxLongitude
    }

    /// The box that contains no point (and intersects no box): what an empty set of points
    /// encloses.
    @inlinable
    public static var empty: BoundingBox {
        BoundingBox(minLatitude: .infinity, maxLatitude: -.infinity, minLongitude: 0, maxLongitude: 0)
    }

    /// The box that contains every position.
    @inlinable
    public static var world: BoundingBox {
        BoundingBox(minLatitude: -90, maxLatitude: 90, minLongitude: -180, maxLongitude: 180)
    }

    /// Whether the box contains no point.
    @inlinable
    public var isEmpty: Bool { !(minLatitude <= maxLatitude) }

    /// Whether the box spans the ±180° meridian (`minLongitude > maxLongitude`).
    @inlinable
    public var crossesAntimeridian: Bool { minLongitude > maxLongitude }

    /// Whether the position lies in the box (edges included; longitudes -180 and 180 are the
    /// same meridian; a longitude outside -180...180 is wrapped first).
    @inlinable
    public func contains(_ c: Coordinate) -> Bool {
        guard c.latitude >= minLatitude && c.latitude <= maxLatitude else { return false }
        let longitude = Coordinate.wrappedLongitude(c.longitude)
        if minLongitude > maxLongitude {
            return longitude >= minLongitude || longitude <= maxLongitude
        }
        return (longitude >= minLongitude && longitude <= maxLongitude)
            || (longitude == -180 && maxLongitude == 180)
            || (longitude == 180 && minLongitude == -180)
    }

    /// Whether the two boxes share at least one position (touching edges count).
    @inlinable
    public func intersects(_ other: BoundingBox) -> Bool {
        guard minLatitude <= other.maxLatitude && other.minLatitude <= maxLatitude else { return false }
        // Longitude intervals on the circle, unrolled so that east ≥ west; they meet when
        // one overlaps the other shifted by a whole turn or not at all.
        let west = minLongitude
        let east = crossesAntimeridian ? maxLongitude + 360 : maxLongitude
        let otherWest = other.minLongitude
        let otherEast = other.crossesAntimeridian ? other.maxLongitude + 360 : other.maxLongitude
        return (otherWest <= east && west <= otherEast)
            || (otherWest + 360 <= east && west <= otherEast + 360)
            || (otherWest - 360 <= east && west <= otherEast - 360)
    }

    /// A box that contains every point within `radius` metres (geodesic, WGS84) of `center`.
    ///
    /// Conservative: it may be slightly larger, never smaller. When the circle may reach a
    /// pole the box spans all longitudes and extends to that pole; across the antimeridian it
    /// wraps. `radius` 0 (or negative) gives the point itself with a sub-millimetre margin
    /// that absorbs rounding.
    public static func around(_ center: Coordinate, radius: Double) -> BoundingBox {
        let latitude = min(90, max(-90, center.latitude))
        // At a pole every longitude names the same point.
        let atPole = abs(latitude) == 90
        let longitude = Coordinate.wrappedLongitude(center.longitude)
        return BoundingBox(
            minLatitude: latitude, maxLatitude: latitude,
            minLongitude: atPole ? -180 : longitude, maxLongitude: atPole ? 180 : longitude
        ).grown(by: radius > 0 ? radius : 0)
    }

    /// The box of a set of points (a polygon ring), choosing the smaller longitude span: the
    /// box leaves out the largest longitude gap between the points, so a ring that crosses
    /// ±180° gives a wrapping box, not one around the whole world. No points give `empty`.
    public static func enclosing(_ points: [Coordinate]) -> BoundingBox {
        guard let first = points.first else { return .empty }
        var minLatitude = first.latitude
        var maxLatitude = first.latitude
        for point in points {
            minLatitude = min(minLatitude, point.latitude)
            maxLatitude = max(maxLatitude, point.latitude)
        }
        let longitudes = points.map { Coordinate.wrappedLongitude($0.longitude) }.sorted()
        // Start with the gap that wraps from the easternmost point round to the westernmost:
        // leaving it out gives a box that does not cross the antimeridian.
        var west = longitudes[0]
        var east = longitudes[longitudes.count - 1]
        var largestGap = west + 360 - east
        for index in longitudes.indices.dropFirst() {
            let gap = longitudes[index] - longitudes[index - 1]
            if gap > largestGap {
                largestGap = gap
                west = longitudes[index]
                east = longitudes[index - 1]
            }
        }
        return BoundingBox(minLatitude: minLatitude, maxLatitude: maxLatitude, minLongitude: west, maxLongitude: east)
    }

    /// This box grown by `metres` (geodesic, WGS84) on every side: it contains every point
    /// within that distance of a point of the box.
    ///
    /// Conservative. Any path of length s changes latitude by at most s / M, with M the
    /// smallest meridional radius of curvature met, and longitude by at most s / p, with p
    /// the smallest parallel radius met; both are taken over the latitude band the path
    /// can reach. When that band reaches a pole the box spans all longitudes and extends to
    /// the pole; longitudes wrap across the antimeridian. Zero, negative or NaN `metres`
    /// leave the box unchanged; an empty box stays empty.
    public func expanded(by metres: Double) -> BoundingBox {
        guard metres > 0 else { return self }
        return grown(by: metres)
    }

    /// The box grown by `metres` ≥ 0 plus a rounding margin (see `expanded(by:)`).
    private func grown(by metres: Double) -> BoundingBox {
        guard !isEmpty else { return self }
        // Relative and absolute margins absorb rounding (about 0.1 mm).
        let distance = metres * (1 + 1e-9)
        let marginDegrees = 1e-9
        let degreesPerRadian = 180 / Double.pi

        // Latitude: M grows with |latitude|, so bound with M at the equator first, then
        // with M at the lowest |latitude| of the band that first bound allows.
        let coarse = distance / Geodesy.meridionalRadius(atLatitude: 0) * degreesPerRadian
        let lowestAbsoluteLatitude: Double
        if minLatitude - coarse <= 0 && maxLatitude + coarse >= 0 {
            lowestAbsoluteLatitude = 0
        } else {
            lowestAbsoluteLatitude = min(abs(minLatitude - coarse), abs(maxLatitude + coarse))
        }
        let latitudeGrowth = distance / Geodesy.meridionalRadius(atLatitude: min(90, lowestAbsoluteLatitude))
            * degreesPerRadian + marginDegrees
        let south = minLatitude - latitudeGrowth
        let north = maxLatitude + latitudeGrowth
        if south <= -90 || north >= 90 {
            return BoundingBox(minLatitude: max(-90, south), maxLatitude: min(90, north), minLongitude: -180, maxLongitude: 180)
        }

        // Longitude: the parallel radius shrinks with |latitude|, so use the band's
        // highest |latitude|.
        let parallel = Geodesy.parallelRadius(atLatitude: max(abs(south), abs(north)))
        let longitudeGrowth = distance / parallel * degreesPerRadian + marginDegrees
        let width = crossesAntimeridian ? maxLongitude + 360 - minLongitude : maxLongitude - minLongitude
        guard width + 2 * longitudeGrowth < 360 else {
            return BoundingBox(minLatitude: south, maxLatitude: north, minLongitude: -180, maxLongitude: 180)
        }
        var west = minLongitude - longitudeGrowth
        if west < -180 { west += 360 }
        var east = maxLongitude + longitudeGrowth
        if east > 180 { east -= 360 }
        return BoundingBox(minLatitude: south, maxLatitude: north, minLongitude: west, maxLongitude: east)
    }
}
