import Foundation
import GeotifyCore
import GeotifyMQTT
import GeotifyTestSupport

/// Several `geotify run` processes sharing the devices of one fence directory on one
/// mosquitto, an observer subscribed to everything they publish, and the traffic the
/// shard tests send: devices that each have a home fence of their own and share a
/// plaza, moving so that every fix after the first is a transition.
final class ShardCluster: Sendable {
    let directory: URL
    let broker: TestBroker
    let observer: TestClient
    /// Publishes the traffic (a client of its own, so waiting for its acknowledgements
    /// does not scan what the observer received).
    let tracker: TestClient
    let fences: URL
    let devices: [String]
    /// Recent fix times: the bridge drops fixes older than a day.
    let base = Int(Date().timeIntervalSince1970) - 7_200

    /// The plaza, a fence shared by every device.
    static let plaza = (latitude: 40.0, longitude: 8.0)

    init(name: String, devices count: Int) throws {
        directory = try makeTemporaryDirectory(name)
        devices = (0..<count).map { "u\($0)/p" }
        // Several bridges publish every notification to one observer at once: let the
        // broker queue more for it than mosquitto's default 1000.
        broker = try TestBroker(extraConfig: "max_queued_messages 1000000\nmax_inflight_messages 0")
        observer = try TestClient(port: broker.port)
        tracker = try TestClient(port: broker.port)
        fences = directory.appendingPathComponent("fences")
        try FileManager.default.createDirectory(at: fences.appendingPathComponent("devices"), withIntermediateDirectories: true)
        let plaza = #"{"identifier": "plaza", "latitude": \#(Self.plaza.latitude), "longitude": \#(Self.plaza.longitude), "radius": 300, "note": "plaza", "eventType": "onEntryAndExit"}"#
        try #"{"shared": [\#(plaza)]}"#.write(to: fences.appendingPathComponent("shared.json"), atomically: true, encoding: .utf8)
        for (index, device) in devices.enumerated() {
            let home = #"{"identifier": "home", "latitude": \#(home(index)), "longitude": 8, "radius": 200, "note": "home", "eventType": "onEntryAndExit"}"#
            try #"{"devices": {"\#(device)": [\#(home)]}}"#.write(
                to: fences.appendingPathComponent("devices/\(device.replacingOccurrences(of: "/", with: "%2F")).json"), atomically: true, encoding: .utf8)
        }
    }

    /// The latitude of the home of device `index`: 1.1 km apart.
    private func home(_ index: Int) -> Double { 50 + Double(index) / 100 }

    /// A bridge of this cluster: instance `shard` ("1/3"), or one instance for all with nil.
    func bridge(_ name: String, prefix: String, shard: String?) throws -> BridgeProcess {
        try BridgeProcess(
            name: name, port: broker.port, fences: fences, directory: directory, prefix: prefix,
            extra: #""homeassistant": {"enabled": false}, "statsInterval": 0"# + (shard.map { #", "shard": "\#($0)""# } ?? ""))
    }

    /// Where the device is at a step: away, home, away, plaza, away, home, then (for
    /// every third device) the plaza, else away.
    enum Place { case away, home, plaza }

    static func place(step: Int, device index: Int) -> Place {
        switch step % 6 {
        case 1, 5: .home
        case 3: .plaza
        case 0 where step > 0 && index % 3 == 0: .plaza
        default: .away
        }
    }

    /// The OwnTracks location of device `index` at `place`, with fix time `step` × 10 s.
    func location(_ index: Int, _ place: Place, step: Int) -> String {
        let (latitude, longitude) = switch place {
        case .home: (home(index), 8.0)
        case .away: (home(index) - 0.045, 8.0)
        case .plaza: Self.plaza
        }
        return #"{"_type":"location","lat":\#(latitude),"lon":\#(longitude),"acc":5,"tst":\#(base + step * 10)}"#
    }

    /// Publishes every device's fix of `step`.
    func publish(step: Int, place: (Int) -> Place) throws {
        try tracker.publishAll(devices.enumerated().map { index, device in
            ("owntracks/\(device)", location(index, place(index), step: step))
        })
    }

    /// The notification ids published under `prefix`, by device, in order.
    func notifications(_ prefix: String) -> [String: [String]] {
        let head = Array(#"{"id":""#.utf8)
        var byDevice: [String: [String]] = [:]
        for message in observer.messages where message.topic.hasPrefix("\(prefix)/event/") {
            guard message.payload.starts(with: head), let end = message.payload[head.count...].firstIndex(of: UInt8(ascii: "\"")) else { continue }
            let id = String(decoding: message.payload[head.count..<end], as: UTF8.self)
            byDevice[String(message.topic.dropFirst(prefix.count + 7)), default: []].append(id)
        }
        return byDevice
    }

    /// How many notifications were published under `prefix`.
    func count(_ prefix: String) -> Int {
        observer.messages.reduce(0) { $0 + ($1.topic.hasPrefix("\(prefix)/event/") ? 1 : 0) }
    }

    /// Subscribes the observer to what the tests read under each of `prefixes`:
    /// notifications, statuses and occupancy.
    func observe(_ prefixes: [String]) throws {
        for prefix in prefixes {
            for filter in ["event/#", "status", "shard/+/status", "occupancy/#", "reply/#"] { try observer.subscribe("\(prefix)/\(filter)") }
        }
    }

    /// The last retained value of a topic, as text (nil when never seen, "" when cleared).
    func last(_ topic: String) -> String? {
        observer.messages.last { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }

    /// The devices a bridge's log says it notified for (`<device> enter <fence> ...`).
    func notifiedDevices(in bridge: BridgeProcess) throws -> Set<String> {
        let log = try String(contentsOf: bridge.logURL, encoding: .utf8)
        var found: Set<String> = []
        for line in log.split(separator: "\n") {
            let words = line.split(separator: " ")
            if let index = words.firstIndex(where: { $0 == "enter" || $0 == "exit" }), index > 0, words[index - 1].hasPrefix("u") {
                found.insert(String(words[index - 1]))
            }
        }
        return found
    }

    /// Starts `bridges` and waits until each says `online` on `statusTopics`.
    func start(_ bridges: [BridgeProcess], statusTopics: [String]) throws -> Bool {
        for bridge in bridges { try bridge.start() }
        return waitUntil(timeout: 30) { statusTopics.allSatisfy { last($0) == "online" } }
    }

    /// Stops `bridges` gracefully and waits until each is gone.
    func stop(_ bridges: [BridgeProcess]) {
        for bridge in bridges { bridge.kill(SIGTERM) }
    }
}
