import Foundation
import GeotifyBridge
import GeotifyCore

/// The traffic issue 10 states its goals on, built as `../shared/bench/gen.py` builds it
/// (the same shape, from `SeededRandom` instead of Python's generator): devices
/// `owntracks/u000/d0` ... on a grid of homes (0.2° of latitude by 0.3° of longitude
/// apart from 48° N 2° E), each with its own circular fences of 100–300 m scattered in a
/// 5 km box around its home, walking randomly 50–150 m per fix inside that box (turning
/// by a normal 0.5 rad a step, reflected at its edges). Messages go round-robin over the
/// devices, each device's `tst` 30 s after its previous one, all of them in the recent
/// past (the bridge drops fixes older than `maximumAge`).
///
/// gen.py ends with one sentinel; here there is one per lane of the bridge, each a
/// device of its own with one fence around its fix that triggers on a first fix inside
/// (`initialTrigger` enter). A lane handles its messages in order, so the sentinel's
/// notification says that lane has handled (and committed) everything before it.
struct SideBySideWorkload: Sendable {
    static let box = 5_000.0
    static let radii = 100.0...300.0
    static let steps = 50.0...150.0
    static let fixInterval = 30
    private static let earthRadius = 6_371_000.0

    /// The messages, sentinels last.
    let traffic: PackedTraffic
    /// The fence file in Geotify's format.
    let fenceFile: String
    let devices: Int
    let fencesPerDevice: Int
    /// The sentinel devices (`zzz/end0` ...), one on each lane.
    let sentinels: [String]
    /// Transitions by gen.py's plain rule (haversine distance below the radius, every
    /// device starting outside every fence), as gen.py prints them.
    let plainRuleTransitions: Int

    /// The workload for `devices` devices (at most `maximumDevices`) with
    /// `fencesPerDevice` fences, `messages` fixes in all (rounded down to whole rounds
    /// over the devices, as gen.py does), the last of them ten minutes before `now`, and
    /// a sentinel for each of the bridge's `lanes`.
    init(devices: Int, fencesPerDevice: Int, messages: Int, lanes: Int, seed: UInt64, now: Double) {
        var random = SeededRandom(seed: seed)
        let rounds = messages / devices
        let firstTime = Int(now) - 600 - SideBySideWorkload.fixInterval * rounds
        var walkers: [(home: (Double, Double), fences: [(Double, Double, Double)], inside: [Bool], x: Double, y: Double, heading: Double)] = []
        var fenceEntries: [String] = []
        var names: [String] = []
        let half = SideBySideWorkload.box / 2
        for number in 0..<devices {
            let name = "u\(SideBySideWorkload.padded(number / 10))/d\(number % 10)"
            let home = (48.0 + Double(number / 40) * 0.2, 2.0 + Double(number % 40) * 0.3)
            var fences: [(Double, Double, Double)] = []
            var entries: [String] = []
            for index in 0..<fencesPerDevice {
                let north = random.uniform(-half...half)
                let east = random.uniform(-half...half)
                let (lat, lon) = SideBySideWorkload.offset(home, north: north, east: east)
                let radius = random.uniform(SideBySideWorkload.radii).rounded(.down)
                fences.append((lat, lon, radius))
                let identifier = "f" + (index < 10 ? "0" : "") + String(index)
                entries.append(#"{"identifier":"\#(identifier)","latitude":\#(lat),"longitude":\#(lon),"radius":\#(Int(radius)),"note":"\#(identifier)","eventType":"onEntryAndExit"}"#)
            }
            fenceEntries.append(#""\#(name)":[\#(entries.joined(separator: ","))]"#)
            names.append(name)
            walkers.append((home, fences, Array(repeating: false, count: fencesPerDevice),
                            random.uniform(-half...half), random.uniform(-half...half), random.uniform(0...(2 * Double.pi))))
        }
        var traffic = PackedTraffic()
        var transitions = 0
        for round in 0..<rounds {
            let time = firstTime + SideBySideWorkload.fixInterval * round
            for device in 0..<devices {
                var walker = walkers[device]
                walker.heading += 0.5 * random.normal()
                let step = random.uniform(SideBySideWorkload.steps)
                walker.x += step * cos(walker.heading)
                walker.y += step * sin(walker.heading)
                if walker.x > half { walker.x = 2 * half - walker.x; walker.heading += Double.pi }
                if walker.x < -half { walker.x = -2 * half - walker.x; walker.heading += Double.pi }
                if walker.y > half { walker.y = 2 * half - walker.y; walker.heading += Double.pi }
                if walker.y < -half { walker.y = -2 * half - walker.y; walker.heading += Double.pi }
                let (lat, lon) = SideBySideWorkload.offset(walker.home, north: walker.y, east: walker.x)
                for (index, fence) in walker.fences.enumerated() {
                    let inside = SideBySideWorkload.haversine(fence.0, fence.1, lat, lon) < fence.2
                    if inside != walker.inside[index] {
                        transitions += 1
                        walker.inside[index] = inside
                    }
                }
                walkers[device] = walker
                let name = names[device]
                traffic.append(
                    topic: "owntracks/\(name)",
                    payload: #"{"_type":"location","tid":"\#(name.suffix(2))","lat":\#(lat),"lon":\#(lon),"acc":20,"alt":30,"batt":80,"vel":5,"t":"u","tst":\#(time)}"#)
            }
        }
        var sentinels: [String] = []
        var candidate = 0
        while sentinels.count < lanes {
            let name = "zzz/end\(candidate)"
            if MessageRouter.lane(of: name, among: lanes) == sentinels.count { sentinels.append(name) }
            candidate += 1
        }
        for sentinel in sentinels {
            fenceEntries.append(#""\#(sentinel)":[{"identifier":"end","latitude":0.5,"longitude":0.5,"radius":100,"note":"sentinel","eventType":"onEntry","initialTrigger":"enter"}]"#)
            traffic.append(
                topic: "owntracks/\(sentinel)",
                payload: #"{"_type":"location","lat":0.5,"lon":0.5,"tst":\#(firstTime + SideBySideWorkload.fixInterval * rounds)}"#)
        }
        self.traffic = traffic
        fenceFile = #"{"devices":{"# + fenceEntries.joined(separator: ",\n") + "}}\n"
        self.devices = devices
        self.fencesPerDevice = fencesPerDevice
        self.sentinels = sentinels
        plainRuleTransitions = transitions
    }

    /// The fence limits the bridge needs for this workload (more fences a device than the
    /// default 20 need `maximumFencesPerDevice`).
    var limits: FenceLimits {
        FenceLimits(maximumFencesPerDevice: max(FenceLimits().maximumFencesPerDevice, fencesPerDevice))
    }

    /// The most devices gen.py's grid of homes can place: 40 a row, the 200th row at
    /// 87.8° N; one more row would pass the pole.
    static let maximumDevices = 8_000

    /// The position `north` and `east` metres from `origin`, rounded to 6 decimals as
    /// gen.py writes it.
    private static func offset(_ origin: (Double, Double), north: Double, east: Double) -> (Double, Double) {
        let lat = origin.0 + (north / earthRadius) * 180 / Double.pi
        let lon = origin.1 + (east / (earthRadius * cos(origin.0 * Double.pi / 180))) * 180 / Double.pi
        return ((lat * 1e6).rounded() / 1e6, (lon * 1e6).rounded() / 1e6)
    }

    /// The OwnTracks Recorder's distance (and gen.py's): haversine on a 6 371 km sphere.
    private static func haversine(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
        let radians = 3.1415926536 / 180.0
        let dLon = (lon1 - lon2) * radians
        let theta1 = lat1 * radians
        let theta2 = lat2 * radians
        let dz = sin(theta1) - sin(theta2)
        let dx = cos(dLon) * cos(theta1) - cos(theta2)
        let dy = sin(dLon) * cos(theta1)
        return asin((dx * dx + dy * dy + dz * dz).squareRoot() / 2) * 2 * earthRadius
    }

    /// `number` with at least three digits: 7 → "007".
    private static func padded(_ number: Int) -> String {
        let digits = String(number)
        return String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }
}
