import Foundation
import GeotifyTestSupport
import Testing

@testable import GeotifyCore

@Suite("CircleDistance")
struct CircleDistanceTests {
    @Test("the trigonometry-free bracket holds every GeographicLib reference distance")
    func bracketHoldsTheReferenceDistances() {
        var closed = 0
        for (lat1, lon1, lat2, lon2, reference) in GeodesyReference.pairs {
            let distance = CircleDistance(Coordinate(latitude: lat1, longitude: lon1), Coordinate(latitude: lat2, longitude: lon2))
            // Geodesy.distance agrees with GeographicLib within 1 cm (GeodesyTests).
            #expect(distance.lower <= reference + 0.01 && distance.upper >= reference - 0.01, "\(lat1), \(lon1) → \(lat2), \(lon2)")
            if distance.upper.isFinite { closed += 1 }
        }
        #expect(closed >= 200, "\(closed)")
    }

    @Test("the bracket holds the exact distance for random pairs at every latitude, up to 2000 km")
    func bracketHoldsRandomPairs() {
        var random = SplitMix64(seed: 11)
        for _ in 0..<20_000 {
            let center = Coordinate(latitude: random.latitude(), longitude: random.longitude())
            let reach = pow(10, 7 * random.unit() - 1) * 1e-3
            let point = Coordinate(
                latitude: max(-90, min(90, center.latitude + reach * (2 * random.unit() - 1))),
                longitude: Coordinate.wrappedLongitude(center.longitude + reach * (2 * random.unit() - 1)))
            let distance = CircleDistance(center, point)
            let exact = Geodesy.distance(center, point)
            #expect(distance.lower <= exact && exact <= distance.upper, "\(center) → \(point): \(exact) not in \(distance.lower)...\(distance.upper)")
        }
    }

    @Test("the ellipsoidal bracket holds every reference distance and the exact distance of random pairs, to 89° and 2000 km")
    func ellipsoidalBracketHolds() {
        for (lat1, lon1, lat2, lon2, reference) in GeodesyReference.pairs {
            let bracket = CircleDistance(Coordinate(latitude: lat1, longitude: lon1), Coordinate(latitude: lat2, longitude: lon2)).ellipsoidal
            #expect(bracket.lower <= reference + 0.01 && bracket.upper >= reference - 0.01, "\(lat1), \(lon1) → \(lat2), \(lon2)")
        }
        var random = SplitMix64(seed: 29)
        var outside: [String] = []
        for index in 0..<40_000 {
            let latitude = index % 4 == 0 ? 89 * (2 * random.unit() - 1) : index % 4 == 1 ? 0.01 * (2 * random.unit() - 1) : random.latitude()
            let center = Coordinate(latitude: latitude, longitude: index % 8 == 0 ? 179.999 : random.longitude())
            let reach = pow(10, 7 * random.unit() - 1) * 1e-3
            let point = Coordinate(
                latitude: max(-90, min(90, center.latitude + reach * (2 * random.unit() - 1))),
                longitude: Coordinate.wrappedLongitude(center.longitude + reach * (2 * random.unit() - 1)))
            let bracket = CircleDistance(center, point).ellipsoidal
            let exact = Geodesy.distance(center, point)
            if !(bracket.lower <= exact && exact <= bracket.upper) { outside.append("\(center) → \(point): \(exact) not in \(bracket)") }
        }
        let first = outside.first ?? "none"
        #expect(outside.count == 0, "\(outside.count) outside, the first: \(first)")
    }

    @Test("the ellipsoidal bracket is five times tighter than the sphere's for fences' distances (to 7 km, to 60°)")
    func ellipsoidalBracketIsTight() {
        var random = SplitMix64(seed: 30)
        for _ in 0..<2_000 {
            let center = Coordinate(latitude: 120 * random.unit() - 60, longitude: random.longitude())
            let point = center.offset(north: 10_000 * (random.unit() - 0.5), east: 10_000 * (random.unit() - 0.5))
            let exact = Geodesy.distance(center, point)
            guard exact > 10 else { continue }
            let bracket = CircleDistance(center, point).ellipsoidal
            // The sphere's bracket is ±0.56 %: about 1.1 % wide.
            #expect((bracket.upper - bracket.lower) / exact < 0.0022, "\(center) → \(point)")
        }
    }

    @Test("thresholds near the distance fall back to the exact distance and answer as it does")
    func thresholdsAtTheBoundaryFallBack() {
        var decidedByBracket = 0
        var fellBack = 0
        // Beyond ±89° the bracket is open and the spherical stage decides, as before.
        for (lat1, lon1, lat2, lon2, _) in GeodesyReference.pairs where abs(lat1) <= 89 && abs(lat2) <= 89 {
            let a = Coordinate(latitude: lat1, longitude: lon1)
            let b = Coordinate(latitude: lat2, longitude: lon2)
            let exact = Geodesy.distance(a, b)
            let thresholds = [
                exact, exact.nextUp, exact.nextDown, exact + 1e-3, exact - 1e-3, exact * 1.001, exact * 0.999,
                exact * 1.05, exact * 0.95, exact * 2, exact / 2,
            ]
            for threshold in thresholds {
                var distance = CircleDistance(a, b)
                if distance.bracketDecides(threshold) { decidedByBracket += 1 } else { fellBack += 1 }
                #expect(distance.isAtMost(threshold) == (exact <= threshold), "\(a) → \(b) at \(threshold)")
            }
            var near = CircleDistance(a, b)
            #expect(!near.bracketDecides(exact))
            #expect(near.isAtMost(exact) && !near.isAtMost(exact.nextDown))
        }
        #expect(decidedByBracket > 500 && fellBack > 500, "\(decidedByBracket) decided, \(fellBack) fell back")
    }

    @Test("precomputed cosines give the same bracket as computed ones")
    func precomputedCosines() {
        let center = Coordinate(latitude: 48.1, longitude: 11.6)
        let point = Coordinate(latitude: 48.11, longitude: 11.58)
        let computed = CircleDistance(center, point)
        let given = CircleDistance(
            center, cosineOfLatitude: cos(48.1 * .pi / 180), point, cosineOfLatitude: cos(48.11 * .pi / 180))
        #expect(computed.lower == given.lower && computed.upper == given.upper)
    }

    @Test("out-of-range latitudes and long ways round leave the bracket open")
    func outOfRangeLeavesTheBracketOpen() {
        let far = CircleDistance(Coordinate(latitude: 0, longitude: -100), Coordinate(latitude: 0, longitude: 100))
        #expect(far.lower == 0 && far.upper == .infinity)
        let invalid = CircleDistance(Coordinate(latitude: 95, longitude: 0), Coordinate(latitude: 89, longitude: 0))
        #expect(invalid.lower == 0 && invalid.upper == .infinity)
        // The proofs of both brackets cover latitudes to ±89°: beyond, they claim nothing,
        // and the spherical stage decides.
        let a = Coordinate(latitude: 89.5, longitude: 10)
        let b = Coordinate(latitude: -89.2, longitude: 10)
        for (center, point) in [(a, a.offset(north: -300, east: 200)), (b, b.offset(north: 300, east: 200))] {
            var polar = CircleDistance(center, point)
            #expect(polar.lower == 0 && polar.upper == .infinity, "\(center) → \(point)")
            #expect(polar.ellipsoidal.lower == 0 && polar.ellipsoidal.upper == .infinity)
            let exact = Geodesy.distance(center, point)
            #expect(polar.isAtMost(exact) && !polar.isAtMost(exact.nextDown))
        }
        var antimeridian = CircleDistance(Coordinate(latitude: 0, longitude: 179.9), Coordinate(latitude: 0, longitude: -179.9))
        #expect(antimeridian.upper == .infinity)
        #expect(antimeridian.isAtMost(23_000) && !antimeridian.isAtMost(22_000))
    }
}
