import Foundation
import GeotifyCore

extension Coordinate {
    /// The point `north` and `east` metres from this one on a flat Earth (the tests need
    /// nearby points, not exact offsets).
    func offset(north: Double, east: Double) -> Coordinate {
        let metresPerDegree = 111_000.0
        return Coordinate(
            latitude: latitude + north / metresPerDegree,
            longitude: Coordinate.wrappedLongitude(longitude + east / (metresPerDegree * cos(latitude * .pi / 180))))
    }
}
