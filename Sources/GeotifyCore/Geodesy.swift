import Foundation

/// Distances on the Earth: the exact WGS84 geodesic distance, a cheap spherical one and a
/// proven bound on their difference, so that fence checks can decide with the cheap
/// distance and pay for the exact one only near a threshold.
public enum Geodesy {
    /// WGS84 equatorial radius (semi-major axis) in metres.
    @inlinable
    public static var equatorialRadius: Double { 6_378_137 }

    /// WGS84 flattening.
    @inlinable
    public static var flattening: Double { 1 / 298.257_223_563 }

    /// Mean radius of the WGS84 ellipsoid in metres, the radius of the sphere used by
    /// `sphericalDistance`.
    @inlinable
    public static var meanRadius: Double { 6_371_008.8 }

    /// Relative error factor of `sphericalDistance` against `distance`.
    ///
    /// Mapping the sphere of radius R onto the ellipsoid by keeping latitude and longitude
    /// scales every tangent vector by a factor between M(0)/R (meridional radius of
    /// curvature at the equator, a(1 - e²)) and N(90°)/R (radius of curvature at a pole,
    /// a/√(1 - e²)). Applying this to the shortest path of either surface gives
    /// M(0)/R · s ≤ ellipsoidal ≤ N(90°)/R · s for a spherical distance s, so the
    /// difference is at most max(1 - M(0)/R, N(90°)/R - 1) · s = 0.0055830205 · s. The
    /// factor is rounded up to absorb floating-point rounding (about 1e-6 relative, far
    /// above the error of either formula, including haversine's near antipodal points).
    @inlinable
    public static var sphericalErrorFactor: Double { 0.005_584 }

    /// Geodesic distance in metres between two positions on the WGS84 ellipsoid.
    ///
    /// Solves the inverse geodesic problem with Karney's algorithm ("Algorithms for
    /// geodesics", J. Geodesy 87, 2013; a transcription of GeographicLib's
    /// `Geodesic::Inverse` restricted to the distance), which converges for every pair,
    /// nearly antipodal ones included, with an error of a few nanometres. Iterations are
    /// bounded. Latitudes outside -90...90 are clamped; any finite longitude is accepted.
    /// Non-finite input gives NaN.
    public static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        inverseDistance(
            latitude1: min(90, max(-90, a.latitude)), longitude1: a.longitude,
            latitude2: min(90, max(-90, b.latitude)), longitude2: b.longitude)
    }

    /// Great-circle (haversine) distance in metres on a sphere of radius `meanRadius`.
    ///
    /// Cheap (a handful of floating-point operations and four libm calls); it differs from
    /// `distance` by at most `sphericalErrorBound(forDistance:)`.
    @inlinable
    public static func sphericalDistance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let radiansPerDegree = Double.pi / 180
        let latitude1 = a.latitude * radiansPerDegree
        let latitude2 = b.latitude * radiansPerDegree
        let halfLatitudeSine = sin((latitude2 - latitude1) * 0.5)
        let halfLongitudeSine = sin((b.longitude - a.longitude) * (radiansPerDegree * 0.5))
        let haversine = halfLatitudeSine * halfLatitudeSine
            + cos(latitude1) * cos(latitude2) * halfLongitudeSine * halfLongitudeSine
        return 2 * meanRadius * asin(min(1, haversine.squareRoot()))
    }

    /// An upper bound on |`distance` - `sphericalDistance`| for a pair whose spherical
    /// distance is `d` metres, so callers can decide with the cheap distance and pay for
    /// the exact one only when `d` is within this bound of a threshold. See
    /// `sphericalErrorFactor` for the proof; the bound is about 0.56 % of `d`.
    @inlinable
    public static func sphericalErrorBound(forDistance d: Double) -> Double {
        d * sphericalErrorFactor
    }

    /// Meridional radius of curvature M(φ) = a(1 - e²)/(1 - e² sin²φ)^(3/2) in metres at a
    /// latitude in degrees: metres per radian of latitude there.
    static func meridionalRadius(atLatitude latitude: Double) -> Double {
        let sine = sin(latitude * .pi / 180)
        let w2 = 1 - eccentricitySquared * sine * sine
        return equatorialRadius * (1 - eccentricitySquared) / (w2 * w2.squareRoot())
    }

    /// Radius of the parallel N(φ)·cos φ in metres at a latitude in degrees: metres per
    /// radian of longitude there (0 at the poles).
    static func parallelRadius(atLatitude latitude: Double) -> Double {
        let radians = latitude * .pi / 180
        let sine = sin(radians)
        let cosine = max(0, cos(radians))
        return equatorialRadius * cosine / (1 - eccentricitySquared * sine * sine).squareRoot()
    }

    /// `meridionalRadius` from the cosine of the latitude (no trigonometry).
    static func meridionalRadius(cosineOfLatitude cosine: Double) -> Double {
        let w2 = 1 - eccentricitySquared * (1 - cosine * cosine)
        return equatorialRadius * (1 - eccentricitySquared) / (w2 * w2.squareRoot())
    }

    /// `parallelRadius` from the cosine of the latitude (no trigonometry).
    static func parallelRadius(cosineOfLatitude cosine: Double) -> Double {
        equatorialRadius * max(0, cosine) / (1 - eccentricitySquared * (1 - cosine * cosine)).squareRoot()
    }
}

// MARK: - Karney's inverse solution (distance only)

extension Geodesy {
    private static let eccentricitySquared = flattening * (2 - flattening)
    private static let oneMinusFlattening = 1 - flattening
    private static let secondEccentricitySquared = eccentricitySquared / (oneMinusFlattening * oneMinusFlattening)
    private static let thirdFlattening = flattening / (2 - flattening)
    private static let polarRadius = equatorialRadius * oneMinusFlattening

    private static let tiny = Double.leastNormalMagnitude.squareRoot()
    private static let tol0 = Double.ulpOfOne
    private static let tol1 = 200 * tol0
    private static let tol2 = tol0.squareRoot()
    private static let tolb = tol0
    private static let xthresh = 1000 * tol2
    private static let etol2 = 0.1 * tol2 / (max(0.001, abs(flattening)) * min(1, 1 - flattening / 2) / 2).squareRoot()
    /// Newton iterations before falling back to bisection, and the hard cap on all
    /// iterations (GeographicLib's maxit1 and maxit2).
    private static let newtonIterations = 20
    private static let maximumIterations = newtonIterations + Double.significandBitCount + 1 + 10

    /// The series coefficients of A3 and C3 that depend only on the ellipsoid.
    private struct EllipsoidSeries {
        let a3: SIMD8<Double>
        let c3: SIMD16<Double>

        init(thirdFlattening n: Double) {
            let a3Coefficients: [Double] = [
                -3, 128,
                -2, -3, 64,
                -1, -3, -1, 16,
                3, -1, -2, 8,
                1, -1, 2,
                1, 1,
            ]
            var a3 = SIMD8<Double>()
            var offset = 0
            for (k, j) in stride(from: 5, through: 0, by: -1).enumerated() {
                let order = min(6 - j - 1, j)
                a3[k] = Geodesy.polynomial(order, a3Coefficients, offset, n) / a3Coefficients[offset + order + 1]
                offset += order + 2
            }
            let c3Coefficients: [Double] = [
                3, 128,
                2, 5, 128,
                -1, 3, 3, 64,
                -1, 0, 1, 8,
                -1, 1, 4,
                5, 256,
                1, 3, 128,
                -3, -2, 3, 64,
                1, -3, 2, 32,
                7, 512,
                -10, 9, 384,
                5, -9, 5, 192,
                7, 512,
                -14, 7, 512,
                21, 2560,
            ]
            var c3 = SIMD16<Double>()
            offset = 0
            var k = 0
            for l in 1..<6 {
                for j in stride(from: 5, through: l, by: -1) {
                    let order = min(6 - j - 1, j)
                    c3[k] = Geodesy.polynomial(order, c3Coefficients, offset, n) / c3Coefficients[offset + order + 1]
                    k += 1
                    offset += order + 2
                }
            }
            self.a3 = a3
            self.c3 = c3
        }
    }

    private static let series = EllipsoidSeries(thirdFlattening: thirdFlattening)

    /// Horner evaluation of the polynomial of the given order whose coefficients start at
    /// `offset` (highest power first).
    private static func polynomial(_ order: Int, _ coefficients: [Double], _ offset: Int, _ x: Double) -> Double {
        var y = coefficients[offset]
        var index = offset
        for _ in 0..<order {
            index += 1
            y = y * x + coefficients[index]
        }
        return y
    }

    private static func polynomial(_ order: Int, _ coefficients: SIMD16<Double>, _ offset: Int, _ x: Double) -> Double {
        var y = coefficients[offset]
        var index = offset
        for _ in 0..<order {
            index += 1
            y = y * x + coefficients[index]
        }
        return y
    }

    private static func a3f(_ eps: Double) -> Double {
        let c = series.a3
        return ((((c[0] * eps + c[1]) * eps + c[2]) * eps + c[3]) * eps + c[4]) * eps + c[5]
    }

    private static func c3f(_ eps: Double) -> SIMD8<Double> {
        var result = SIMD8<Double>()
        var multiplier = 1.0
        var offset = 0
        for l in 1..<6 {
            let order = 6 - l - 1
            multiplier *= eps
            result[l] = multiplier * polynomial(order, series.c3, offset, eps)
            offset += order + 1
        }
        return result
    }

    private static func a1m1f(_ eps: Double) -> Double {
        let eps2 = eps * eps
        let t = eps2 * (eps2 * (eps2 + 4) + 64) / 256
        return (t + eps) / (1 - eps)
    }

    private static func c1f(_ eps: Double) -> SIMD8<Double> {
        let eps2 = eps * eps
        var c = SIMD8<Double>()
        var d = eps
        c[1] = d * (eps2 * (6 - eps2) - 16) / 32
        d *= eps
        c[2] = d * (eps2 * (64 - 9 * eps2) - 128) / 2048
        d *= eps
        c[3] = d * (9 * eps2 - 16) / 768
        d *= eps
        c[4] = d * (3 * eps2 - 5) / 512
        d *= eps
        c[5] = d * -7 / 1280
        d *= eps
        c[6] = d * -7 / 2048
        return c
    }

    private static func a2m1f(_ eps: Double) -> Double {
        let eps2 = eps * eps
        let t = eps2 * (eps2 * (-11 * eps2 - 28) - 192) / 256
        return (t - eps) / (1 + eps)
    }

    private static func c2f(_ eps: Double) -> SIMD8<Double> {
        let eps2 = eps * eps
        var c = SIMD8<Double>()
        var d = eps
        c[1] = d * (eps2 * (eps2 + 2) + 16) / 32
        d *= eps
        c[2] = d * (eps2 * (35 * eps2 + 64) + 384) / 2048
        d *= eps
        c[3] = d * (15 * eps2 + 80) / 768
        d *= eps
        c[4] = d * (7 * eps2 + 35) / 512
        d *= eps
        c[5] = d * 63 / 1280
        d *= eps
        c[6] = d * 77 / 2048
        return c
    }

    /// Clenshaw summation of Σ_{l=1...count} c[l] sin(2 l σ), with sin σ and cos σ given.
    private static func sineSeries(_ sinx: Double, _ cosx: Double, _ c: SIMD8<Double>, count: Int) -> Double {
        var k = count + 1
        var n = count
        let ar = 2 * (cosx - sinx) * (cosx + sinx)
        var y0 = 0.0
        var y1 = 0.0
        if n & 1 != 0 {
            k -= 1
            y0 = c[k]
        }
        n /= 2
        while n > 0 {
            n -= 1
            k -= 1
            y1 = ar * y0 - y1 + c[k]
            k -= 1
            y0 = ar * y1 - y0 + c[k]
        }
        return 2 * sinx * cosx * y0
    }

    /// Solves k⁴ + 2k³ - (x² + y² - 1)k² - 2y²k - y² = 0 for the positive root.
    private static func astroid(_ x: Double, _ y: Double) -> Double {
        let p = x * x
        let q = y * y
        let r = (p + q - 1) / 6
        guard !(q == 0 && r <= 0) else { return 0 }
        let s = p * q / 4
        let r2 = r * r
        let r3 = r * r2
        let disc = s * (s + 2 * r3)
        var u = r
        if disc >= 0 {
            var t3 = s + r3
            t3 += t3 < 0 ? -disc.squareRoot() : disc.squareRoot()
            let t = cbrt(t3)
            u += t + (t != 0 ? r2 / t : 0)
        } else {
            let angle = atan2((-disc).squareRoot(), -(s + r3))
            u += 2 * r * cos(angle / 3)
        }
        let v = (u * u + q).squareRoot()
        let uv = u < 0 ? q / (v - u) : u + v
        let w = (uv - q) / (2 * v)
        return uv / ((uv + w * w).squareRoot() + w)
    }

    private static func normalized(_ x: Double, _ y: Double) -> (Double, Double) {
        let r = hypot(x, y)
        return (x / r, y / r)
    }

    /// Rounds tiny angles so that values below 1/2^57 degrees underflow to zero, avoiding
    /// near-singular cases.
    private static func roundedAngle(_ x: Double) -> Double {
        let z = 1.0 / 16
        var y = abs(x)
        if y < z { y = z - (z - y) }
        return x.sign == .minus ? -y : y
    }

    /// Error-free sum: returns s = round(u + v) and t with u + v = s + t exactly.
    private static func exactSum(_ u: Double, _ v: Double) -> (Double, Double) {
        let s = u + v
        var up = s - v
        var vpp = s - up
        up -= u
        vpp -= v
        let t = s == 0 ? s : 0 - (up + vpp)
        return (s, t)
    }

    /// y - x reduced to -180...180 accurately, as a sum d + t with t tiny.
    private static func angleDifference(_ x: Double, _ y: Double) -> (Double, Double) {
        var (d, t) = exactSum((-x).remainder(dividingBy: 360), y.remainder(dividingBy: 360))
        (d, t) = exactSum(d.remainder(dividingBy: 360), t)
        if d == 0 || abs(d) == 180 {
            let signSource = t == 0 ? y - x : -t
            d = signSource.sign == .minus ? -abs(d) : abs(d)
        }
        return (d, t)
    }

    /// Sine and cosine of an angle in degrees with exact results at multiples of 90°.
    private static func sinCosDegrees(_ x: Double) -> (Double, Double) {
        var r = x.isFinite ? x.truncatingRemainder(dividingBy: 360) : .nan
        let q = r.isNaN ? 0 : Int((r / 90).rounded())
        r -= 90 * Double(q)
        return quadrantSinCos(r * .pi / 180, quadrant: q, sign: x)
    }

    /// Sine and cosine of (x + t) degrees with x in -180...180 and t a small correction.
    private static func sinCosDegrees(_ x: Double, _ t: Double) -> (Double, Double) {
        let q = x.isFinite ? Int((x / 90).rounded()) : 0
        let r = roundedAngle(x - 90 * Double(q) + t)
        return quadrantSinCos(r * .pi / 180, quadrant: q, sign: x)
    }

    private static func quadrantSinCos(_ radians: Double, quadrant q: Int, sign x: Double) -> (Double, Double) {
        var s = sin(radians)
        var c = cos(radians)
        switch q & 3 {
        case 1: (s, c) = (c, -s)
        case 2: (s, c) = (-s, -c)
        case 3: (s, c) = (-c, s)
        default: break
        }
        c += 0
        if s == 0 { s = x.sign == .minus ? -0.0 : 0.0 }
        return (s, c)
    }

    /// The reduced parametric latitude β of a latitude, as (sin β, cos β).
    private static func reducedLatitude(_ latitude: Double) -> (Double, Double) {
        var (s, c) = sinCosDegrees(latitude)
        s *= oneMinusFlattening
        (s, c) = normalized(s, c)
        return (s, max(tiny, c))
    }

    /// Distance in units of the polar radius, together with the reduced length, for the
    /// auxiliary-sphere arc from σ1 to σ2 (GeographicLib's Lengths with DISTANCE and
    /// REDUCEDLENGTH).
    private static func lengths(
        eps: Double, sig12: Double,
        ssig1: Double, csig1: Double, dn1: Double,
        ssig2: Double, csig2: Double, dn2: Double
    ) -> (distance: Double, reducedLength: Double) {
        let a1m1 = a1m1f(eps)
        let c1 = c1f(eps)
        let a2m1 = a2m1f(eps)
        let c2 = c2f(eps)
        let m0x = a1m1 - a2m1
        let a1 = 1 + a1m1
        let a2 = 1 + a2m1
        let b1 = sineSeries(ssig2, csig2, c1, count: 6) - sineSeries(ssig1, csig1, c1, count: 6)
        let b2 = sineSeries(ssig2, csig2, c2, count: 6) - sineSeries(ssig1, csig1, c2, count: 6)
        let j12 = m0x * sig12 + (a1 * b1 - a2 * b2)
        let m12b = dn2 * (csig1 * ssig2) - dn1 * (ssig1 * csig2) - csig1 * csig2 * j12
        return (a1 * (sig12 + b1), m12b)
    }

    /// Reduced length only, in units of the polar radius (GeographicLib's Lengths with
    /// REDUCEDLENGTH), used for the Newton derivative.
    private static func reducedLength(
        eps: Double, sig12: Double,
        ssig1: Double, csig1: Double, dn1: Double,
        ssig2: Double, csig2: Double, dn2: Double
    ) -> Double {
        let a1m1 = a1m1f(eps)
        let a2m1 = a2m1f(eps)
        let m0x = a1m1 - a2m1
        let cb = (1 + a1m1) * c1f(eps) - (1 + a2m1) * c2f(eps)
        let j12 = m0x * sig12 + (sineSeries(ssig2, csig2, cb, count: 6) - sineSeries(ssig1, csig1, cb, count: 6))
        return dn2 * (csig1 * ssig2) - dn1 * (ssig1 * csig2) - csig1 * csig2 * j12
    }

    /// Distance only, in units of the polar radius (GeographicLib's Lengths with DISTANCE).
    private static func arcLength(eps: Double, sig12: Double, ssig1: Double, csig1: Double, ssig2: Double, csig2: Double) -> Double {
        let c1 = c1f(eps)
        let b1 = sineSeries(ssig2, csig2, c1, count: 6) - sineSeries(ssig1, csig1, c1, count: 6)
        return (1 + a1m1f(eps)) * (sig12 + b1)
    }

    private struct StartingPoint {
        var sig12: Double
        var salp1: Double
        var calp1: Double
        var dnm: Double
    }

    /// A starting azimuth for Newton's method (GeographicLib's InverseStart for f > 0);
    /// for very short lines `sig12` ≥ 0 is already the answer.
    private static func inverseStart(
        sbet1: Double, cbet1: Double, sbet2: Double, cbet2: Double,
        lam12: Double, slam12: Double, clam12: Double
    ) -> StartingPoint {
        var sig12 = -1.0
        var dnm = Double.nan
        let sbet12 = sbet2 * cbet1 - cbet2 * sbet1
        let cbet12 = cbet2 * cbet1 + sbet2 * sbet1
        var sbet12a = sbet2 * cbet1
        sbet12a += cbet2 * sbet1
        let shortline = cbet12 >= 0 && sbet12 < 0.5 && cbet2 * lam12 < 0.5
        var somg12: Double
        var comg12: Double
        if shortline {
            var sbetm2 = (sbet1 + sbet2) * (sbet1 + sbet2)
            sbetm2 /= sbetm2 + (cbet1 + cbet2) * (cbet1 + cbet2)
            dnm = (1 + secondEccentricitySquared * sbetm2).squareRoot()
            let omg12 = lam12 / (oneMinusFlattening * dnm)
            somg12 = sin(omg12)
            comg12 = cos(omg12)
        } else {
            somg12 = slam12
            comg12 = clam12
        }
        var salp1 = cbet2 * somg12
        var calp1 = comg12 >= 0
            ? sbet12 + cbet2 * sbet1 * somg12 * somg12 / (1 + comg12)
            : sbet12a - cbet2 * sbet1 * somg12 * somg12 / (1 - comg12)
        let ssig12 = hypot(salp1, calp1)
        let csig12 = sbet1 * sbet2 + cbet1 * cbet2 * comg12
        if shortline && ssig12 < etol2 {
            sig12 = atan2(ssig12, csig12)
        } else if csig12 >= 0 || ssig12 >= 6 * abs(thirdFlattening) * .pi * cbet1 * cbet1 {
            // Not nearly antipodal: the spherical estimate above is a good start.
        } else {
            // Nearly antipodal: scale to the astroid problem.
            let lam12x = atan2(-slam12, -clam12)
            let k2 = sbet1 * sbet1 * secondEccentricitySquared
            let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
            let lamscale = flattening * cbet1 * a3f(eps) * .pi
            let betscale = lamscale * cbet1
            let x = lam12x / lamscale
            let y = sbet12a / betscale
            if y > -tol1 && x > -1 - xthresh {
                salp1 = min(1, -x)
                calp1 = -(1 - salp1 * salp1).squareRoot()
            } else {
                let k = astroid(x, y)
                let omg12a = lamscale * (-x * k / (1 + k))
                somg12 = sin(omg12a)
                comg12 = -cos(omg12a)
                salp1 = cbet2 * somg12
                calp1 = sbet12a - cbet2 * sbet1 * somg12 * somg12 / (1 - comg12)
            }
        }
        if !(salp1 <= 0) {
            (salp1, calp1) = normalized(salp1, calp1)
        } else {
            salp1 = 1
            calp1 = 0
        }
        return StartingPoint(sig12: sig12, salp1: salp1, calp1: calp1, dnm: dnm)
    }

    private struct HybridSolution {
        var lam12: Double
        var sig12: Double
        var ssig1: Double
        var csig1: Double
        var ssig2: Double
        var csig2: Double
        var eps: Double
        var dlam12: Double
    }

    /// The longitude difference reached by the geodesic leaving point 1 with azimuth α1,
    /// minus the wanted one, and its derivative (GeographicLib's Lambda12).
    private static func lambda12(
        sbet1: Double, cbet1: Double, dn1: Double,
        sbet2: Double, cbet2: Double, dn2: Double,
        salp1: Double, calp1 calp1In: Double,
        slam120: Double, clam120: Double, wantDerivative: Bool
    ) -> HybridSolution {
        let calp1 = sbet1 == 0 && calp1In == 0 ? -tiny : calp1In
        let salp0 = salp1 * cbet1
        let calp0 = hypot(calp1, salp1 * sbet1)
        let somg1 = salp0 * sbet1
        let comg1 = calp1 * cbet1
        let (ssig1, csig1) = normalized(sbet1, comg1)
        let calp2: Double
        if cbet2 != cbet1 || abs(sbet2) != -sbet1 {
            let term = cbet1 < -sbet1 ? (cbet2 - cbet1) * (cbet1 + cbet2) : (sbet1 - sbet2) * (sbet1 + sbet2)
            calp2 = ((calp1 * cbet1) * (calp1 * cbet1) + term).squareRoot() / cbet2
        } else {
            calp2 = abs(calp1)
        }
        let somg2 = salp0 * sbet2
        let comg2 = calp2 * cbet2
        let (ssig2, csig2) = normalized(sbet2, comg2)
        let sig12 = atan2(max(0, csig1 * ssig2 - ssig1 * csig2) + 0, csig1 * csig2 + ssig1 * ssig2)
        let somg12 = max(0, comg1 * somg2 - somg1 * comg2) + 0
        let comg12 = comg1 * comg2 + somg1 * somg2
        let eta = atan2(somg12 * clam120 - comg12 * slam120, comg12 * clam120 + somg12 * slam120)
        let k2 = calp0 * calp0 * secondEccentricitySquared
        let eps = k2 / (2 * (1 + (1 + k2).squareRoot()) + k2)
        let c3 = c3f(eps)
        let b312 = sineSeries(ssig2, csig2, c3, count: 5) - sineSeries(ssig1, csig1, c3, count: 5)
        let domg12 = -flattening * a3f(eps) * salp0 * (sig12 + b312)
        var dlam12 = Double.nan
        if wantDerivative {
            if calp2 == 0 {
                dlam12 = -2 * oneMinusFlattening * dn1 / sbet1
            } else {
                let m12b = reducedLength(
                    eps: eps, sig12: sig12, ssig1: ssig1, csig1: csig1, dn1: dn1,
                    ssig2: ssig2, csig2: csig2, dn2: dn2)
                dlam12 = m12b * oneMinusFlattening / (calp2 * cbet2)
            }
        }
        return HybridSolution(
            lam12: eta + domg12, sig12: sig12, ssig1: ssig1, csig1: csig1,
            ssig2: ssig2, csig2: csig2, eps: eps, dlam12: dlam12)
    }

    /// Karney's inverse problem (GeographicLib's GenInverse) for the distance s12 only.
    private static func inverseDistance(
        latitude1: Double, longitude1: Double, latitude2: Double, longitude2: Double
    ) -> Double {
        var (lon12, lon12s) = angleDifference(longitude1, longitude2)
        if lon12.sign == .minus {
            lon12 = -lon12
            lon12s = -lon12s
        }
        let lam12 = lon12 * .pi / 180
        let (slam12, clam12) = sinCosDegrees(lon12, lon12s)
        lon12s = (180 - lon12) - lon12s

        var lat1 = roundedAngle(latitude1)
        var lat2 = roundedAngle(latitude2)
        if abs(lat1) < abs(lat2) || lat2.isNaN { swap(&lat1, &lat2) }
        if lat1.sign != .minus {
            lat1 = -lat1
            lat2 = -lat2
        }

        let (sbet1, cbet1) = reducedLatitude(lat1)
        var (sbet2, cbet2) = reducedLatitude(lat2)
        if cbet1 < -sbet1 {
            if cbet2 == cbet1 { sbet2 = sbet1.sign == sbet2.sign ? sbet1 : -sbet1 }
        } else if abs(sbet2) == -sbet1 {
            cbet2 = cbet1
        }
        let dn1 = (1 + secondEccentricitySquared * sbet1 * sbet1).squareRoot()
        let dn2 = (1 + secondEccentricitySquared * sbet2 * sbet2).squareRoot()

        if lat1 == -90 || slam12 == 0 {
            // Meridional geodesic (or point 1 at a pole).
            let csig1 = clam12 * cbet1
            let csig2 = cbet2
            let sig12 = atan2(max(0, csig1 * sbet2 - sbet1 * csig2) + 0, csig1 * csig2 + sbet1 * sbet2)
            let (s12x, m12x) = lengths(
                eps: thirdFlattening, sig12: sig12, ssig1: sbet1, csig1: csig1, dn1: dn1,
                ssig2: sbet2, csig2: csig2, dn2: dn2)
            if sig12 < tol2 || m12x >= 0 {
                if sig12 < 3 * tiny || (sig12 < tol0 && (s12x < 0 || m12x < 0)) { return 0 }
                return 0 + s12x * polarRadius
            }
            // Otherwise the meridian is not the shortest path (nearly antipodal points on
            // opposite sides of a pole): solve it as a general geodesic.
        }

        if sbet1 == 0 && lon12s >= flattening * 180 {
            // Both points on the equator, and the equator is the shortest path.
            return equatorialRadius * lam12
        }
        let start = inverseStart(
            sbet1: sbet1, cbet1: cbet1, sbet2: sbet2, cbet2: cbet2,
            lam12: lam12, slam12: slam12, clam12: clam12)
        if start.sig12 >= 0 {
            return start.sig12 * polarRadius * start.dnm
        }

        var salp1 = start.salp1
        var calp1 = start.calp1
        var iterations = 0
        var tripn = false
        var tripb = false
        var salp1a = tiny
        var calp1a = 1.0
        var salp1b = tiny
        var calp1b = -1.0
        var solution: HybridSolution
        while true {
            solution = lambda12(
                sbet1: sbet1, cbet1: cbet1, dn1: dn1, sbet2: sbet2, cbet2: cbet2, dn2: dn2,
                salp1: salp1, calp1: calp1, slam120: slam12, clam120: clam12,
                wantDerivative: iterations < newtonIterations)
            let v = solution.lam12
            if tripb || !(abs(v) >= (tripn ? 8 : 1) * tol0) || iterations == maximumIterations { break }
            // Keep the bracket [α1a, α1b] around the root up to date.
            if v > 0 && (iterations > newtonIterations || calp1 / salp1 > calp1b / salp1b) {
                salp1b = salp1
                calp1b = calp1
            } else if v < 0 && (iterations > newtonIterations || calp1 / salp1 < calp1a / salp1a) {
                salp1a = salp1
                calp1a = calp1
            }
            iterations += 1
            if iterations < newtonIterations && solution.dlam12 > 0 {
                let dalp1 = -v / solution.dlam12
                if abs(dalp1) < .pi {
                    let sdalp1 = sin(dalp1)
                    let cdalp1 = cos(dalp1)
                    let nsalp1 = salp1 * cdalp1 + calp1 * sdalp1
                    if nsalp1 > 0 {
                        calp1 = calp1 * cdalp1 - salp1 * sdalp1
                        (salp1, calp1) = normalized(nsalp1, calp1)
                        tripn = abs(v) <= 16 * tol0
                        continue
                    }
                }
            }
            // Newton failed or was not trusted: bisect the bracket.
            (salp1, calp1) = normalized((salp1a + salp1b) / 2, (calp1a + calp1b) / 2)
            tripn = false
            tripb = abs(salp1a - salp1) + (calp1a - calp1) < tolb
                || abs(salp1 - salp1b) + (calp1 - calp1b) < tolb
        }
        let s12 = arcLength(
            eps: solution.eps, sig12: solution.sig12, ssig1: solution.ssig1, csig1: solution.csig1,
            ssig2: solution.ssig2, csig2: solution.csig2)
        return 0 + s12 * polarRadius
    }
}
