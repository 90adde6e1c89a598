import Foundation
import GeotifyBridge
import GeotifyCore
import GeotifyMQTT

/// What one device's fence change costs the lane that holds many devices: the first batch
/// and tick after a book comes into force (fences gone, admission places and timer
/// deadlines: `LaneCore.leaveRemovedFences`, `reckonAdmission`, `retime`), beside the
/// same one-message batch and tick with the book unchanged.
/// A lane decides nothing else meanwhile, so this is how long a fence command or a file
/// edit holds back every other device's positions in that lane.
struct BookChangeScenario {
    /// The devices of the lane (each named by the book, with `fencesPerDevice` circles).
    let devices: Int
    static let fencesPerDevice = 2
    /// Changes measured; the median counts.
    static let changes = 21

    func run() -> ResultRow {
        let now = BenchClock.wall()
        var settings = Settings()
        settings.lanes = 1
        settings.homeAssistantEnabled = false
        settings.maximumDevices = devices + 1
        let names = (0..<devices).map { "u\($0)/phone" }
        func place(_ number: Int) -> Coordinate {
            Coordinate(latitude: 40 + Double(number % 1_000) * 0.01, longitude: -3 + Double(number / 1_000) * 0.01)
        }
        func fences(_ number: Int, count: Int) -> [Fence] {
            (0..<count).map { index in
                Fence(
                    identifier: "f\(index)", region: .circle(center: place(number), radius: 100 + 50 * Double(index)), note: "",
                    eventType: [.onEntry, .onExit])
            }
        }
        var own: [String: [Fence]] = [:]
        for (number, name) in names.enumerated() { own[name] = fences(number, count: Self.fencesPerDevice) }
        let book = FenceBook(devices: own)
        func message(_ number: Int, at time: Double) -> Inbound {
            let topic = "owntracks/\(names[number])"
            let payload = OwnTracksPayloads.location(place(number), accuracy: 10, timestamp: time, variant: number)
            return Inbound(route: .location(.ownTracks), device: names[number], message: MQTTMessage(topic: topic, payload: payload), arrival: now)
        }
        let configuration = LaneConfiguration(settings: settings)
        var core = LaneCore(
            configuration: configuration, admission: DeviceAdmission(maximum: settings.maximumDevices, perOwner: settings.maximumDevicesPerOwner),
            states: [:], book: book, now: now)
        var start = 0
        while start < devices {
            let end = min(start + 64, devices)
            var effects = LaneEffects()
            core.handle((start..<end).map { message($0, at: now - 100) }, book: book, into: &effects)
            start = end
        }
        var unchanged: [Double] = []
        var changed: [Double] = []
        var current = book
        for change in 0..<Self.changes {
            let number = (change * 7_919) % devices
            var effects = LaneEffects()
            let same = message(number, at: now - 50 + Double(change))
            unchanged.append(Self.time {
                core.handle([same], book: current, into: &effects)
                core.tick(now: now, book: current, into: &effects)
            })
            let next = current.replacing(devices: [names[number]: fences(number, count: Self.fencesPerDevice + 1 + change % 2)])
            let after = message((number + 1) % devices, at: now - 50 + Double(change))
            changed.append(Self.time {
                core.handle([after], book: next, into: &effects)
                core.tick(now: now, book: next, into: &effects)
            })
            current = next
        }
        let median = { (values: [Double]) in values.sorted()[values.count / 2] }
        return ResultRow(
            scenario: "lane", measure: "the first batch and tick after one device's fences change, \(ResultRow.count(devices)) devices in the lane (thread CPU, median of \(Self.changes))",
            value: median(changed) * 1e3, unit: .milliseconds,
            baseline: median(unchanged) * 1e3, baselineName: "the same, book unchanged",
            detail: "one position a batch; each change adds or removes one of a device's circles")
    }

    private static func time(_ body: () -> Void) -> Double {
        let start = BenchClock.threadCPU()
        body()
        return BenchClock.threadCPU() - start
    }
}
