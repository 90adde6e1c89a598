import Foundation

/// The distance from a circle's centre to a point, compared against thresholds in three
/// stages, each paid for only when the one before cannot decide: a bracket computed
/// without trigonometry (`lower`...`upper`), the spherical distance with its proven error
/// bound, and the exact ellipsoidal distance (each computed at most once). Every stage
/// decides only when the exact distance is provably on one side of the threshold, so the
/// answer is always the exact distance's.
///
/// The bracket: the haversine of the central angle is h = sin²(Δφ/2) + cos φ₁ cos φ₂
/// sin²(Δλ/2). With y − y³/6 ≤ sin y ≤ y for 0 ≤ y ≤ √6, h lies between the same sum
/// taken with those two polynomials in place of the sines; the spherical distance
/// s = 2R asin(√h) lies between 2R√h (asin u ≥ u) and 2R√h / √(1 − h) (asin u ≤
/// tan(asin u)); and the exact distance within `Geodesy.sphericalErrorFactor` · s of s.
/// A relative margin of 1e-9 absorbs the floating-point rounding of those few operations
/// (a few ulps each), and an absolute one of 1 µm the rounding of the coordinates'
/// differences and of the exact distance itself (nanometres). The cosines are rounded
/// too, which matters only where they vanish: latitudes beyond ±89°, like longitude
/// differences beyond ±180° and central angles beyond about 60°, leave the bracket open,
/// so the later stages decide (as they did before the bracket existed).
public struct CircleDistance {
    @usableFromInline let center: Coordinate
    @usableFromInline let point: Coordinate
    /// The exact distance is at least this.
    @usableFromInline let lower: Double
    /// The exact distance is at most this.
    @usableFromInline let upper: Double
    @usableFromInline var spherical: Double?
    @usableFromInline var exact: Double?

    /// The distance from `center` to `point`.
    @inlinable
    public init(_ center: Coordinate, _ point: Coordinate) {
        let radiansPerDegree = Double.pi / 180
        self.init(
            center, cosineOfLatitude: cos(center.latitude * radiansPerDegree),
            point, cosineOfLatitude: cos(point.latitude * radiansPerDegree))
    }

    /// The distance from `center` to `point`, given the cosines of their latitudes
    /// (computed once per fence and once per fix by callers that compare many pairs).
    @inlinable
    public init(_ center: Coordinate, cosineOfLatitude centerCosine: Double, _ point: Coordinate, cosineOfLatitude pointCosine: Double) {
        self.center = center
        self.point = point
        let halfRadiansPerDegree = Double.pi / 360
        let halfLatitude = abs(point.latitude - center.latitude) * halfRadiansPerDegree
        let halfLongitude = abs(point.longitude - center.longitude) * halfRadiansPerDegree
        let cosines = max(0, centerCosine * pointCosine)
        let latitudeBelow = halfLatitude - halfLatitude * halfLatitude * halfLatitude / 6
        let longitudeBelow = halfLongitude - halfLongitude * halfLongitude * halfLongitude / 6
        let haversineAbove = halfLatitude * halfLatitude + cosines * halfLongitude * halfLongitude
        let haversineBelow = latitudeBelow * latitudeBelow + cosines * longitudeBelow * longitudeBelow
        let factor = Geodesy.sphericalErrorFactor
        let diameter = 2 * Geodesy.meanRadius
        // Bracket open (lower 0, upper ∞) beyond the ranges the proof covers, and for NaN.
        if halfLongitude <= Double.pi / 2 && haversineAbove <= 0.25 && abs(center.latitude) <= 89 && abs(point.latitude) <= 89 {
            lower = diameter * haversineBelow.squareRoot() * (1 - factor) * (1 - 1e-9) - 1e-6
            upper = diameter * (haversineAbove / (1 - haversineAbove)).squareRoot() * (1 + factor) * (1 + 1e-9) + 1e-6
        } else {
            lower = 0
            upper = .infinity
        }
    }

    /// Whether the geodesic distance is at most `threshold` metres.
    @inlinable
    public mutating func isAtMost(_ threshold: Double) -> Bool {
        if upper <= threshold { return true }
        if lower > threshold { return false }
        return sphericalIsAtMost(threshold)
    }

    /// The second and third stages of `isAtMost`.
    @usableFromInline
    mutating func sphericalIsAtMost(_ threshold: Double) -> Bool {
        let spherical = self.spherical ?? Geodesy.sphericalDistance(center, point)
        self.spherical = spherical
        let bound = Geodesy.sphericalErrorBound(forDistance: spherical)
        if spherical + bound <= threshold { return true }
        if spherical - bound > threshold { return false }
        let exact = self.exact ?? Geodesy.distance(center, point)
        self.exact = exact
        return exact <= threshold
    }

    /// Whether the trigonometry-free bracket alone decides `threshold` (what tests check
    /// the fallbacks with).
    func bracketDecides(_ threshold: Double) -> Bool {
        upper <= threshold || lower > threshold
    }
}
