import Foundation
import GeotifyCore
import GeotifyTestSupport
import Testing

@Suite("Geodesy")
struct GeodesyTests {
    static let shortLimit = 100_000.0

    @Test("distance agrees with GeographicLib within 1 cm up to 100 km")
    func shortDistancesMatchGeographicLib() {
        let short = GeodesyReference.pairs.filter { $0.4 <= Self.shortLimit + 1e-6 }
        #expect(short.count >= 300)
        for (lat1, lon1, lat2, lon2, reference) in short {
            let ours = Geodesy.distance(Coordinate(latitude: lat1, longitude: lon1), Coordinate(latitude: lat2, longitude: lon2))
            #expect(abs(ours - reference) <= 0.01, "(\(lat1), \(lon1)) → (\(lat2), \(lon2)): \(ours) vs \(reference)")
        }
    }

    @Test("distance is within 0.5 % of GeographicLib for long and nearly antipodal pairs")
    func longDistancesMatchGeographicLib() {
        let long = GeodesyReference.pairs.filter { $0.4 > Self.shortLimit + 1e-6 }
        #expect(long.count >= 50)
        for (lat1, lon1, lat2, lon2, reference) in long {
            let ours = Geodesy.distance(Coordinate(latitude: lat1, longitude: lon1), Coordinate(latitude: lat2, longitude: lon2))
            #expect(ours.isFinite)
            #expect(abs(ours - reference) <= 0.005 * reference, "(\(lat1), \(lon1)) → (\(lat2), \(lon2)): \(ours) vs \(reference)")
        }
    }

    @Test("distance is symmetric and zero for coincident points, including ±180 and the poles")
    func coincidentAndSymmetric() {
        let a = Coordinate(latitude: 12, longitude: 180)
        let b = Coordinate(latitude: 12, longitude: -180)
        #expect(Geodesy.distance(a, b) == 0)
        #expect(Geodesy.distance(Coordinate(latitude: 90, longitude: 10), Coordinate(latitude: 90, longitude: -170)) == 0)
        #expect(Geodesy.sphericalDistance(a, b) < 1e-6)
        for (lat1, lon1, lat2, lon2, _) in GeodesyReference.pairs.prefix(50) {
            let p = Coordinate(latitude: lat1, longitude: lon1)
            let q = Coordinate(latitude: lat2, longitude: lon2)
            #expect(abs(Geodesy.distance(p, q) - Geodesy.distance(q, p)) <= 1e-9 * max(1, Geodesy.distance(p, q)))
        }
    }

    @Test("distance is finite and sensible for every pair, however antipodal")
    func nearlyAntipodalPairsConvergeToFiniteValues() {
        var random = SplitMix64(seed: 7)
        let halfMeridian = 20_003_931.458_625
        for _ in 0..<2_000 {
            let lat = random.latitude()
            let lon = random.longitude()
            let offset = Double.random(in: -1e-3...1e-3, using: &random)
            let p = Coordinate(latitude: lat, longitude: lon)
            let q = Coordinate(latitude: max(-90, min(90, -lat + offset)), longitude: lon + 180 - offset)
            let d = Geodesy.distance(p, q)
            #expect(d.isFinite && d > 19_900_000 && d <= halfMeridian + 1e-3, "\(p) → \(q): \(d)")
        }
        // Out-of-range longitudes wrap; out-of-range latitudes are clamped.
        let wrapped = Geodesy.distance(Coordinate(latitude: 1, longitude: 540), Coordinate(latitude: 1, longitude: 180.5))
        #expect(abs(wrapped - Geodesy.distance(Coordinate(latitude: 1, longitude: 180), Coordinate(latitude: 1, longitude: -179.5))) < 1e-6)
        #expect(Geodesy.distance(Coordinate(latitude: 95, longitude: 0), Coordinate(latitude: 90, longitude: 0)) == 0)
    }

    @Test("sphericalDistance is the haversine distance on the mean sphere")
    func sphericalDistanceKnownValues() {
        let oneDegree = Geodesy.meanRadius * .pi / 180
        let equator = Geodesy.sphericalDistance(Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 0, longitude: 1))
        #expect(abs(equator - oneDegree) < 1e-6)
        let meridian = Geodesy.sphericalDistance(Coordinate(latitude: 89.5, longitude: 20), Coordinate(latitude: -90, longitude: 20))
        #expect(abs(meridian - 179.5 * oneDegree) < 1e-6)
        let acrossAntimeridian = Geodesy.sphericalDistance(Coordinate(latitude: 0, longitude: 179.5), Coordinate(latitude: 0, longitude: -179.5))
        #expect(abs(acrossAntimeridian - oneDegree) < 1e-6)
        let antipodal = Geodesy.sphericalDistance(Coordinate(latitude: 30, longitude: 0), Coordinate(latitude: -30, longitude: 180))
        #expect(abs(antipodal - 180 * oneDegree) < 1)
    }

    @Test("the spherical error factor is the proven bound, rounded up")
    func sphericalErrorFactorIsProven() {
        let a = Geodesy.equatorialRadius
        let e2 = Geodesy.flattening * (2 - Geodesy.flattening)
        let meridionalAtEquator = a * (1 - e2)
        let normalAtPole = a / (1 - e2).squareRoot()
        let factor = max(1 - meridionalAtEquator / Geodesy.meanRadius, normalAtPole / Geodesy.meanRadius - 1)
        #expect(Geodesy.sphericalErrorFactor >= factor)
        #expect(Geodesy.sphericalErrorFactor <= factor * 1.001)
        #expect(Geodesy.sphericalErrorBound(forDistance: 0) == 0)
    }

    @Test("sphericalErrorBound really bounds |distance - sphericalDistance| on 12 000 random pairs")
    func sphericalErrorBoundHolds() {
        var random = SplitMix64(seed: 42)
        var pairs: [(Coordinate, Coordinate)] = []
        // Anywhere to anywhere (long distances).
        for _ in 0..<4_000 {
            pairs.append((Coordinate(latitude: random.latitude(), longitude: random.longitude()),
                          Coordinate(latitude: random.latitude(), longitude: random.longitude())))
        }
        // Short and medium pairs anywhere, up to about 1°, across the antimeridian too.
        for _ in 0..<4_000 {
            let lat = random.latitude()
            let lon = random.longitude()
            let scale = pow(10, Double.random(in: -7...0, using: &random))
            let lat2 = max(-90, min(90, lat + scale * Double.random(in: -1...1, using: &random)))
            let lon2 = Coordinate.wrappedLongitude(lon + scale * Double.random(in: -1...1, using: &random))
            pairs.append((Coordinate(latitude: lat, longitude: lon), Coordinate(latitude: lat2, longitude: lon2)))
        }
        // Near the poles, including pairs across a pole.
        for _ in 0..<2_000 {
            let sign: Double = Bool.random(using: &random) ? 1 : -1
            pairs.append((Coordinate(latitude: sign * Double.random(in: 85...90, using: &random), longitude: random.longitude()),
                          Coordinate(latitude: sign * Double.random(in: 85...90, using: &random), longitude: random.longitude())))
        }
        // Nearly antipodal pairs.
        for _ in 0..<2_000 {
            let lat = random.latitude()
            let lon = random.longitude()
            let lat2 = max(-90, min(90, -lat + Double.random(in: -2...2, using: &random)))
            let lon2 = Coordinate.wrappedLongitude(lon + 180 + Double.random(in: -2...2, using: &random))
            pairs.append((Coordinate(latitude: lat, longitude: lon), Coordinate(latitude: lat2, longitude: lon2)))
        }

        var worstRatio = 0.0
        for (p, q) in pairs {
            let spherical = Geodesy.sphericalDistance(p, q)
            let exact = Geodesy.distance(p, q)
            let bound = Geodesy.sphericalErrorBound(forDistance: spherical)
            #expect(abs(exact - spherical) <= bound, "\(p) → \(q): exact \(exact), spherical \(spherical), bound \(bound)")
            if spherical > 0 { worstRatio = max(worstRatio, abs(exact - spherical) / bound) }
        }
        // The bound is tight: some pairs come close to it.
        #expect(worstRatio > 0.9)
    }
}

extension SplitMix64 {
    /// A latitude uniformly distributed over the sphere's area.
    mutating func latitude() -> Double {
        asin(Double.random(in: -1...1, using: &self)) * 180 / .pi
    }

    mutating func longitude() -> Double {
        Double.random(in: -180...180, using: &self)
    }
}
