import Foundation
@testable import GeotifyBridge
import GeotifyTestSupport
import GeotifyTime
import Synchronization

/// A bridge under test: its own broker, fence file and state directory, and a test
/// client that sees everything the bridge publishes.
final class BridgeHarness {
    let broker: TestBroker
    let directory: URL
    let observer: TestClient
    let logLines = LogLines()
    private(set) var bridge: Bridge?

    static let fences = """
        { "devices": {
            "alice/phone": [
              { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
                "note": "Welcome home", "eventType": "onEntryAndExit" },
              { "identifier": "office", "latitude": 52.5163, "longitude": 13.3777, "radius": 150,
                "note": "Left the office", "eventType": "onExit" } ],
            "van/7": [
              { "identifier": "depot", "latitude": 48.1374, "longitude": 11.5755, "radius": 250,
                "note": "Van 7 is back", "eventType": "onEntry" } ] } }
        """

    /// The clock the bridge keeps time by: the system's, or one the test moves.
    let clock: any Scheduler

    /// `brokerConfig` is added to the broker's (`TestBroker(extraConfig:)`).
    init(
        fences: String = BridgeHarness.fences, strictDevices: Bool = false, start: Bool = true,
        clock: any Scheduler = SystemScheduler(), brokerConfig: String = "", sweepBound: Int = RetainedCollection.maximumStale,
        configure: @escaping (inout Settings) -> Void = { _ in }
    ) throws {
        self.clock = clock
        self.sweepBound = sweepBound
        base = Int(clock.now) - 3_600
        broker = try TestBroker(extraConfig: brokerConfig)
        directory = try makeTemporaryDirectory("bridge")
        observer = try TestClient(port: broker.port)
        self.strictDevices = strictDevices
        self.configure = configure
        try fences.write(to: fencesURL, atomically: true, encoding: .utf8)
        try observer.subscribe("geotify/#")
        if start { try startBridge() }
    }

    private let strictDevices: Bool
    /// The most stale topics each start's sweep keeps (`Bridge.init`).
    private let sweepBound: Int
    private let configure: (inout Settings) -> Void
    var fencesURL: URL { directory.appendingPathComponent("fences.json") }
    var stateDirectory: String { directory.appendingPathComponent("state").path }

    var settings: Settings {
        var settings = Settings()
        settings.broker.port = broker.port
        settings.fencesPath = fencesURL.path
        settings.stateDirectory = stateDirectory
        settings.clientID = "geotify-test"
        settings.strictDevices = strictDevices
        settings.lanes = 2
        configure(&settings)
        return settings
    }

    /// Starts a new bridge (after a stop, with the same state directory).
    func startBridge() throws {
        let bridge = Bridge(settings: settings, logger: Logger(level: .debug, sink: logLines.append), scheduler: clock, sweepBound: sweepBound)
        // A sharded bridge reports on `geotify/shard/<index>/status`.
        let status = settings.shard.map { "geotify/shard/\($0.index)/status" } ?? "geotify/status"
        let online = { self.observer.messages.filter { $0.topic == status && $0.text == "online" }.count }
        // Counted before the start: `online` may arrive before `start()` returns.
        let before = online()
        try bridge.start()
        self.bridge = bridge
        guard waitUntil(timeout: 10, { online() > before }) else {
            let seen = observer.events.suffix(20).map { "\($0)".prefix(120) }.joined(separator: "\n")
            throw TestSupportError("the bridge did not come online; its log:\n" + logLines.all.suffix(30).joined(separator: "\n")
                + "\nthe observer's last events:\n" + seen)
        }
    }

    func stopBridge() {
        bridge?.stop()
        bridge = nil
    }

    /// A recent time the tests count their fix times from (fixes older than a day are
    /// dropped by the bridge).
    let base: Int

    /// Publishes an OwnTracks location for `device` (`user/device`) taken `tst` seconds
    /// after `base`.
    func ownTracks(_ device: String, _ latitude: Double, _ longitude: Double, tst: Int, acc: Int? = 10) throws {
        let accuracy = acc.map { #","acc":\#($0)"# } ?? ""
        try observer.publish("owntracks/\(device)", #"{"_type":"location","lat":\#(latitude),"lon":\#(longitude),"tst":\#(base + tst)\#(accuracy),"tid":"ap","batt":90}"#)
    }

    /// The events published for `device`, parsed, after waiting for `count` of them.
    func events(_ device: String, count: Int, timeout: Double = 10) -> [[String: Any]] {
        observer.waitForMessages(on: "geotify/event/\(device)", count: count, timeout: timeout).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
        }
    }

    /// The latest badge value seen for `device`.
    func badge(_ device: String) -> String? {
        observer.messages.last { $0.topic == "geotify/badge/\(device)" }?.text
    }

    deinit {
        bridge?.stop()
        observer.disconnect()
        broker.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Log lines captured from a bridge.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}
