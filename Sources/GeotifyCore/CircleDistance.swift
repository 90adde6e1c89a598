import Foundation

/// The distance from a circle's centre to a point, compared against thresholds in four
/// stages, each paid for only when the one before cannot decide: a bracket computed
/// without trigonometry (`lower`...`upper`), a tighter one on the ellipsoid itself
/// (`ellipsoidal`), the spherical distance with its proven error bound, and the exact
/// ellipsoidal distance (each computed at most once). Every stage decides only when the
/// exact distance is provably on one side of the threshold, so the answer is always the
/// exact distance's.
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
///
/// The ellipsoidal bracket (see `ellipsoidal`) does without the sphere, whose 0.56 %
/// brackets every distance at a threshold within about 0.6 % of it: it bounds the
/// ellipsoid's own metric between the latitudes the points span, to about the relative
/// change of the radii over that span (0.1 % at 45° for 5 km, 0.005 % for 200 m).
public struct CircleDistance {
    @usableFromInline let center: Coordinate
    @usableFromInline let point: Coordinate
    /// cos(latitude) of the centre and of the point.
    @usableFromInline let centerCosine: Double
    @usableFromInline let pointCosine: Double
    /// The exact distance is at least this.
    @usableFromInline let lower: Double
    /// The exact distance is at most this.
    @usableFromInline let upper: Double
    @usableFromInline var ellipsoidalBracket: (lower: Double, upper: Double)?
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
        self.centerCosine = centerCosine
        self.pointCosine = pointCosine
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
        return ellipsoidalIsAtMost(threshold)
    }

    /// The second, third and fourth stages of `isAtMost`.
    @usableFromInline
    mutating func ellipsoidalIsAtMost(_ threshold: Double) -> Bool {
        let bracket = ellipsoidalBracket ?? ellipsoidal
        ellipsoidalBracket = bracket
        if bracket.upper <= threshold { return true }
        if bracket.lower > threshold { return false }
        return sphericalIsAtMost(threshold)
    }

    /// Bounds on the geodesic distance from the ellipsoid's metric, ds² = M(φ)² dφ² +
    /// p(φ)² dλ² (M the meridional radius of curvature, increasing with |φ|; p = N cos φ
    /// the radius of the parallel, decreasing with |φ|), with Δφ and Δλ (radians, |Δλ| ≤
    /// π) between the two points:
    ///
    /// - Above: the path straight in (φ, λ) stays between the two latitudes, so its
    ///   length, which the geodesic's cannot exceed, is at most √((M⁺Δφ)² + (p⁺Δλ)²) with
    ///   M⁺ the largest M there (at the latitude farthest from the equator) and p⁺ the
    ///   largest p (at the nearest, or the equator when they straddle it).
    /// - Below: a path that stays within w of those latitudes has length ∫√(M²φ'² + p²λ'²)
    ///   ≥ ∫√(M⁻²φ'² + p⁻²λ'²) ≥ √((M⁻Δφ)² + (p⁻Δλ)²) (the triangle inequality for the
    ///   integral, and a path's total changes are at least Δφ and Δλ), M⁻ and p⁻ the
    ///   smallest over that wider band. A path that leaves it changes latitude by at least
    ///   2w, so it is at least M(0)·2w long; with w = upper / (2 · 6 335 439 m) (at most
    ///   upper / 2M(0)) that is at least the upper bound, which is at least the lower one.
    ///   Either way the geodesic is at least √((M⁻Δφ)² + (p⁻Δλ)²).
    ///
    /// The band's cosines come from the points' own, without trigonometry: cos(x + w) ≥
    /// cos x (1 − w²/2) − w sin x and, for w ≤ x ≤ π/2, cos(x − w) ≤ cos x + w sin x
    /// (nearer the equator than w, the band holds it, and its largest cosine is 1).
    /// A relative margin of 1e-9 and an absolute one of 1 µm absorb the rounding (a few
    /// ulps a step, and the cosines' own near the poles), as in the first bracket.
    @usableFromInline
    var ellipsoidal: (lower: Double, upper: Double) {
        let radiansPerDegree = Double.pi / 180
        let longitudeDegrees = abs(point.longitude - center.longitude)
        guard longitudeDegrees <= 180, abs(center.latitude) <= 89, abs(point.latitude) <= 89 else { return (0, .infinity) }
        let dLatitude = abs(point.latitude - center.latitude) * radiansPerDegree
        let dLongitude = longitudeDegrees * radiansPerDegree
        let straddles = (center.latitude < 0) != (point.latitude < 0)
        let far = max(0, min(centerCosine, pointCosine))
        let near = straddles ? 1 : min(1, max(centerCosine, pointCosine))
        let northAbove = Geodesy.meridionalRadius(cosineOfLatitude: far) * dLatitude
        let eastAbove = Geodesy.parallelRadius(cosineOfLatitude: near) * dLongitude
        let upper = (northAbove * northAbove + eastAbove * eastAbove).squareRoot() * (1 + 1e-9) + 1e-6
        let w = upper / (2 * 6_335_439)
        let farSine = max(0, 1 - far * far).squareRoot()
        let nearSine = max(0, 1 - near * near).squareRoot()
        let bandFar = max(0, far * (1 - w * w / 2) - w * farSine)
        // sin x > w means x > w (x ≥ sin x): the band stays off the equator. Else it may
        // reach it, and its largest cosine is 1.
        let bandNear = nearSine <= w ? 1 : min(1, near + w * nearSine)
        let northBelow = Geodesy.meridionalRadius(cosineOfLatitude: bandNear) * dLatitude
        let eastBelow = Geodesy.parallelRadius(cosineOfLatitude: bandFar) * dLongitude
        let lower = (northBelow * northBelow + eastBelow * eastBelow).squareRoot() * (1 - 1e-9) - 1e-6
        return (lower, upper)
    }

    /// The third and fourth stages of `isAtMost`.
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
