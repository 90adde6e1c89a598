import Foundation
import GeotifyCore

/// Moving about on a spherical Earth, for generating workloads: good to a fraction of a
/// percent, which synthetic data does not need to beat, and well-behaved at the poles
/// and across the antimeridian, where the workload deliberately goes.
enum Sphere {
    static let radius = Geodesy.meanRadius

    /// The point `distance` metres from `start` along the initial `bearing` (radians
    /// clockwise from north); latitude kept a hair off the poles, longitude wrapped.
    static func destination(from start: Coordinate, distance: Double, bearing: Double) -> Coordinate {
        let radiansPerDegree = Double.pi / 180
        let angle = distance / radius
        let latitude1 = start.latitude * radiansPerDegree
        let longitude1 = start.longitude * radiansPerDegree
        let sine = sin(latitude1) * cos(angle) + cos(latitude1) * sin(angle) * cos(bearing)
        let latitude2 = asin(max(-1, min(1, sine)))
        let longitude2 = longitude1 + atan2(
            sin(bearing) * sin(angle) * cos(latitude1), cos(angle) - sin(latitude1) * sin(latitude2))
        return Coordinate(
            latitude: max(-89.9999, min(89.9999, latitude2 / radiansPerDegree)),
            longitude: Coordinate.wrappedLongitude(longitude2 / radiansPerDegree))
    }

    /// The initial bearing (radians clockwise from north) of the great circle from `start`
    /// to `end`.
    static func bearing(from start: Coordinate, to end: Coordinate) -> Double {
        let radiansPerDegree = Double.pi / 180
        let latitude1 = start.latitude * radiansPerDegree
        let latitude2 = end.latitude * radiansPerDegree
        let longitudeDelta = (end.longitude - start.longitude) * radiansPerDegree
        return atan2(
            sin(longitudeDelta) * cos(latitude2),
            cos(latitude1) * sin(latitude2) - sin(latitude1) * cos(latitude2) * cos(longitudeDelta))
    }
}
