/// A `BoundingBox` in single precision, rounded outwards, so a spatial index's boxes
/// (`FenceIndex`) take 16 bytes each instead of 32. It may be a little larger than the
/// box it stands for (never smaller); the exact check follows for fixes inside it.
public struct CompactBox: Sendable, Hashable {
    let minLatitude: Float
    let maxLatitude: Float
    let minLongitude: Float
    let maxLongitude: Float

    public init(_ box: BoundingBox) {
        minLatitude = CompactBox.down(box.minLatitude)
        maxLatitude = CompactBox.up(box.maxLatitude)
        minLongitude = CompactBox.down(box.minLongitude)
        maxLongitude = CompactBox.up(box.maxLongitude)
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
