import GeotifyCore

/// Precomputed fixes of many walking and driving devices: step after step, every device
/// once per step, so consecutive fixes belong to different devices as they arrive at a
/// busy bridge.
///
/// Replaying past the end plays the walks backward, then forward again, so a measurement
/// can run as long as it needs while every walk stays continuous and every device's
/// timestamps keep increasing.
struct FixStream: Sendable {
    let deviceCount: Int
    let stepCount: Int
    /// The device names (`u<n>/phone`, as OwnTracks topics name them).
    let names: [String]
    private let latitudes: [Double]
    private let longitudes: [Double]
    private let accuracies: [Double]
    /// The time of the first step, seconds since 1970.
    static let start = 1_764_000_000.0

    /// Walks `walkers` for `steps` steps.
    init(walkers: [Walker], steps: Int, _ random: inout SeededRandom) {
        var walkers = walkers
        deviceCount = walkers.count
        stepCount = steps
        names = walkers.indices.map { "u\($0)/phone" }
        var latitudes: [Double] = []
        var longitudes: [Double] = []
        var accuracies: [Double] = []
        latitudes.reserveCapacity(walkers.count * steps)
        longitudes.reserveCapacity(walkers.count * steps)
        accuracies.reserveCapacity(walkers.count * steps)
        for _ in 0..<steps {
            for device in walkers.indices {
                latitudes.append(walkers[device].position.latitude)
                longitudes.append(walkers[device].position.longitude)
                accuracies.append(Walker.accuracy(&random))
                walkers[device].step(&random)
            }
        }
        self.latitudes = latitudes
        self.longitudes = longitudes
        self.accuracies = accuracies
    }

    /// The number of distinct fixes before the replay turns round.
    var count: Int { deviceCount * stepCount }

    /// Fix number `number` (any non-negative number: see the type's description).
    @inline(__always)
    func fix(_ number: Int) -> (device: Int, coordinate: Coordinate, accuracy: Double, timestamp: Double) {
        let round = number / count
        let within = number % count
        var step = within / deviceCount
        let device = within % deviceCount
        if round % 2 == 1 { step = stepCount - 1 - step }
        let slot = step * deviceCount + device
        let timestamp = FixStream.start + Double(round * stepCount + within / deviceCount) * Walker.interval
        return (device, Coordinate(latitude: latitudes[slot], longitude: longitudes[slot]), accuracies[slot], timestamp)
    }
}
