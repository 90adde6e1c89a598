/// The distance from a circle's centre to a point, compared against thresholds with the
/// cheap spherical distance and its proven error bound, paying for the exact ellipsoidal
/// distance only when a threshold falls within that bound (then computed once).
public struct CircleDistance {
    @usableFromInline let center: Coordinate
    @usableFromInline let point: Coordinate
    @usableFromInline let spherical: Double
    @usableFromInline let bound: Double
    @usableFromInline var exact: Double?

    @inlinable
    public init(_ center: Coordinate, _ point: Coordinate) {
        self.center = center
        self.point = point
        spherical = Geodesy.sphericalDistance(center, point)
        bound = Geodesy.sphericalErrorBound(forDistance: spherical)
    }

    /// Whether the geodesic distance is at most `threshold` metres.
    @inlinable
    public mutating func isAtMost(_ threshold: Double) -> Bool {
        if spherical + bound <= threshold { return true }
        if spherical - bound > threshold { return false }
        if exact == nil { exact = Geodesy.distance(center, point) }
        return exact! <= threshold
    }
}
