/// A `BoundingBox` in single precision, rounded outwards, so a device's fence boxes
/// fit in a few cache lines: the per-fix check of "could this fence matter" reads 16
/// bytes a fence instead of a whole `Fence`. It may be a little larger than the box it
/// stands for (never smaller); the exact check follows for fixes inside it.
public struct CompactBox: Sendable, Hashable {
    @usableFromInline let minLatitude: Float
    @usableFromInline let maxLatitude: Float
    @usableFromInline let minLongitude: Float
    @usableFromInline let maxLongitude: Float

    public init(_ box: BoundingBox) {
        minLatitude = CompactBox.down(box.minLatitude)
        maxLatitude = CompactBox.up(box.maxLatitude)
        minLongitude = CompactBox.down(box.minLongitude)
        maxLongitude = CompactBox.up(box.maxLongitude)
    }

    /// Whether `point` may lie in the box (as `BoundingBox.contains`, for longitudes in
    /// -180...180).
    @inlinable
    public func contains(_ point: Coordinate) -> Bool {
        let latitude = point.latitude
        guard latitude >= Double(minLatitude) && latitude <= Double(maxLatitude) else { return false }
        let longitude = point.longitude
        let west = Double(minLongitude)
        let east = Double(maxLongitude)
        if west > east { return longitude >= west || longitude <= east }
        return (longitude >= west && longitude <= east) || (longitude <= -180 && east >= 180) || (longitude >= 180 && west <= -180)
    }

    /// The box whose edges have these single-precision bit patterns (see `bitPatterns`).
    @inline(__always)
    init(bitPatterns: (south: UInt32, north: UInt32, west: UInt32, east: UInt32)) {
        minLatitude = Float(bitPattern: bitPatterns.south)
        maxLatitude = Float(bitPattern: bitPatterns.north)
        minLongitude = Float(bitPattern: bitPatterns.west)
        maxLongitude = Float(bitPattern: bitPatterns.east)
    }

    /// The edges' single-precision bit patterns, for packing the box into other storage.
    var bitPatterns: (south: UInt32, north: UInt32, west: UInt32, east: UInt32) {
        (minLatitude.bitPattern, maxLatitude.bitPattern, minLongitude.bitPattern, maxLongitude.bitPattern)
    }

    private static func down(_ value: Double) -> Float {
        let rounded = Float(value)
        return Double(rounded) > value ? rounded.nextDown : rounded
    }

    private static func up(_ value: Double) -> Float {
        let rounded = Float(value)
        return Double(rounded) < value ? rounded.nextUp : rounded
    }
}
