import Foundation
import GeotifyCore

/// One device's random walk: a person walking (1.4 m/s) or a vehicle driving (14 m/s),
/// drifting in heading and turning back toward home when it strays too far.
struct Walker {
    /// Seconds between two fixes, as OwnTracks reports while moving.
    static let interval = 10.0

    private(set) var position: Coordinate
    let home: Coordinate
    /// Metres per second.
    let speed: Double
    /// How far from home it roams, in metres.
    let range: Double
    private var heading: Double

    /// A walker starting at `home`; `drivingShare` of them drive (three in ten by default).
    init(home: Coordinate, range: Double, drivingShare: Double = 0.3, _ random: inout SeededRandom) {
        self.home = home
        position = home
        let drives = random.unit() < drivingShare
        speed = drives ? 14 : 1.4
        self.range = drives ? range * 2 : range
        heading = random.uniform(0...(2 * Double.pi))
    }

    /// The GPS accuracy of a fix: 5–30 m, as phones outdoors report.
    static func accuracy(_ random: inout SeededRandom) -> Double {
        (random.logUniform(5, 30)).rounded()
    }

    /// Moves on by one fix interval.
    mutating func step(_ random: inout SeededRandom) {
        heading += random.normal() * 0.4
        if Geodesy.sphericalDistance(position, home) > range {
            heading = Sphere.bearing(from: position, to: home) + random.normal() * 0.3
        }
        position = Sphere.destination(from: position, distance: speed * Walker.interval * random.uniform(0.5...1.5), bearing: heading)
    }
}
