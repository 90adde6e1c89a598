import Foundation
import GeotifyCore

/// The end-to-end traffic: 10 000 devices walking and driving around their homes, each
/// with its own fences near home (circles of 100 m – 1 km, so that a few percent of
/// fixes cross one and notifications flow), and the fence file that gives the bridge
/// those fences.
struct EndToEndWorkload {
    static let devices = 10_000
    static let fencesPerDevice = 20

    private var walkers: [Walker]
    private var random: SeededRandom
    private var cursor = 0
    /// The fence file, in Geotify's format.
    let fenceFile: String

    init(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let places = Places(count: 500, random: &random)
        var walkers: [Walker] = []
        var devices: [String] = []
        for device in 0..<EndToEndWorkload.devices {
            let home = Places.around(places.randomTown(&random), spread: 5_000, &random)
            walkers.append(Walker(home: home, range: 2_000, &random))
            let fences = (0..<EndToEndWorkload.fencesPerDevice).map { index in
                let center = Places.around(home, spread: 2_000, &random)
                return #"{"identifier":"f\#(index)","latitude":\#(String(format: "%.6f", center.latitude)),"longitude":\#(String(format: "%.6f", center.longitude)),"radius":\#(Int(random.logUniform(100, 1_000))),"note":"fence \#(index)","eventType":"onEntryAndExit"}"#
            }
            devices.append(#""u\#(device)/phone":[\#(fences.joined(separator: ","))]"#)
        }
        fenceFile = #"{"devices":{"# + devices.joined(separator: ",\n") + "}}\n"
        self.walkers = walkers
        self.random = random
    }

    /// The next `count` positions, device after device, each device moving on one step.
    mutating func next(_ count: Int) -> [PositionPublishers.Prepared] {
        (0..<count).map { _ in
            let device = cursor % walkers.count
            cursor += 1
            let position = walkers[device].position
            walkers[device].step(&random)
            let lat = String(format: "%.6f", position.latitude)
            let lon = String(format: "%.6f", position.longitude)
            let acc = Int(Walker.accuracy(&random))
            let text = #"{"_type":"location","lat":\#(lat),"lon":\#(lon),"acc":\#(acc),"batt":80,"tid":"ap","conn":"m","tst":"#
            return PositionPublishers.Prepared(topic: "owntracks/u\(device)/phone", prefix: Array(text.utf8))
        }
    }
}
