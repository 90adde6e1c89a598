import Foundation
import GeotifyBridge
import GeotifyTestSupport
import GeotifyTime

/// A bridge for the reliability and security tests: its own directory (fence file,
/// state), connected to a broker the test made (plain, TLS or with passwords), its log
/// captured. Unlike `BridgeHarness` it brings no broker or observer of its own.
final class BridgeUnderTest {
    /// Two devices whose fences all notify on entry and exit: `walker/phone` with `home`
    /// and `work`, `van/7` with `depot`.
    static let fences = """
        { "devices": {
            "walker/phone": [
              { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
                "note": "Home", "eventType": "onEntryAndExit" },
              { "identifier": "work", "latitude": 52.53, "longitude": 13.40, "radius": 150,
                "note": "Work", "eventType": "onEntryAndExit" } ],
            "van/7": [
              { "identifier": "depot", "latitude": 48.1374, "longitude": 11.5755, "radius": 250,
                "note": "Depot", "eventType": "onEntryAndExit" } ] } }
        """

    let directory: URL
    let logLines = LogLines()
    var settings = Settings()
    private(set) var bridge: Bridge?

    /// The clock the bridge keeps time by: the system's, or one the test moves.
    let clock: any Scheduler

    /// A bridge for the broker on 127.0.0.1:`port` with client id `clientID`, keeping time
    /// by `clock`; `configure` adjusts the settings before `start()`.
    init(port: Int, clientID: String, clock: any Scheduler = SystemScheduler(), configure: (inout Settings) -> Void = { _ in }) throws {
        self.clock = clock
        directory = try makeTemporaryDirectory(clientID)
        let fencesFile = directory.appendingPathComponent("fences.json")
        try Self.fences.write(to: fencesFile, atomically: true, encoding: .utf8)
        settings.broker.port = port
        settings.clientID = clientID
        settings.fencesPath = fencesFile.path
        settings.stateDirectory = directory.appendingPathComponent("state").path
        settings.lanes = 2
        configure(&settings)
    }

    /// Starts the bridge (it connects in the background).
    func start() throws {
        let bridge = Bridge(settings: settings, logger: Logger(level: .debug, sink: logLines.append), scheduler: clock)
        try bridge.start()
        self.bridge = bridge
    }

    /// Waits until the bridge says `online` on `geotify/status` at the broker on
    /// `port`. It publishes that after subscribing, on the same connection, so from then
    /// on the broker has its subscriptions and a position published next reaches it.
    /// ("connected to" in its log comes before it subscribes: a position published on
    /// that alone may reach the broker first and go to nobody.)
    func waitUntilOnline(port: Int, timeout: Double = 10) throws -> Bool {
        let status = try BrokerObserver(port: port, subscribe: ["geotify/status"])
        return waitUntil(timeout: timeout) { status.messages(under: "geotify/status").contains { $0.payload == Array("online".utf8) } }
    }

    /// The log lines that contain `text`.
    func logged(_ text: String) -> [String] {
        logLines.all.filter { $0.contains(text) }
    }

    deinit {
        bridge?.stop(timeout: 1)
        try? FileManager.default.removeItem(at: directory)
    }
}
