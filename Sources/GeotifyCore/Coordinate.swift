/// A WGS84 position in degrees: the unit every fence, fix and distance in Geotify is
/// expressed in.
///
/// The value is not validated on construction (parsers decide how to report bad input);
/// `isValid` tells whether it is a usable position.
public struct Coordinate: Sendable, Hashable {
    /// Geodetic latitude in degrees, valid in -90...90 (positive north).
    public var latitude: Double
    /// Longitude in degrees, valid in -180...180 (positive east).
    public var longitude: Double

    /// Creates a position from a latitude and a longitude in degrees.
    @inlinable
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }

    /// Whether both components are finite and in range (latitude in -90...90, longitude in
    /// -180...180), so that geometry on this position is meaningful.
    @inlinable
    public var isValid: Bool {
        latitude >= -90 && latitude <= 90 && longitude >= -180 && longitude <= 180
    }

    /// A longitude in degrees reduced to -180...180, so that arithmetic on longitudes
    /// (differences, offsets) lands back on the usual range. Values already in range are
    /// returned unchanged; ±180 keep their sign.
    @inlinable
    public static func wrappedLongitude(_ degrees: Double) -> Double {
        if degrees >= -180 && degrees <= 180 { return degrees }
        let reduced = degrees.remainder(dividingBy: 360)
        return abs(reduced) == 180 ? (degrees < 0 ? -180 : 180) : reduced
    }
}
