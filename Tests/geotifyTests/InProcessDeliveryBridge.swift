import Foundation
import GeotifyBridge
import GeotifyTestSupport
import GeotifyTime
import Synchronization

/// A `Bridge` of a `DeliveryScenario` run in this process on a `ManualScheduler`, with one
/// delivery target and its log lines kept: for the tests that move the clock (the log's
/// budgets, the queue's bounds) instead of waiting for it, as a `geotify run` would need.
final class InProcessDeliveryBridge {
    let bridge: Bridge
    let scheduler: ManualScheduler
    private let logged = Lines()

    /// The log lines so far, shared with the logger's sink.
    private final class Lines: Sendable {
        let value = Mutex<[String]>([])
    }

    /// Starts a bridge named `name` (client id, topic prefix, settings file and state
    /// directory `state-<name>`, one lane) with the delivery target `target` (a JSON
    /// object: `DeliveryScenario.webhook`), and waits until it says it is online.
    init(_ scenario: DeliveryScenario, _ name: String, target: String) throws {
        let settingsURL = scenario.directory.appendingPathComponent("\(name).json")
        try """
            {"broker": "mqtt://127.0.0.1:\(scenario.broker.port)", "clientId": "\(name)", "topicPrefix": "\(name)",
             "fences": "\(scenario.fencesURL.path)", "stateDir": "state-\(name)", "lanes": 1,
             \(DeliveryScenario.notify(target))}
            """.write(to: settingsURL, atomically: true, encoding: .utf8)
        scheduler = ManualScheduler(now: Date().timeIntervalSince1970.rounded(.down))
        let logger = Logger(level: .info, sink: { [logged] line in logged.value.withLock { $0.append(line) } })
        bridge = Bridge(settings: try Settings.load(path: settingsURL.path), logger: logger, scheduler: scheduler)
        try bridge.start()
        guard waitUntil({ scenario.observer.messages.contains { $0.topic == "\(name)/status" && $0.text == "online" } }) else {
            bridge.stop(timeout: 1)
            throw TestSupportError("the bridge \(name) did not come online")
        }
    }

    /// How many log lines so far contain `text`.
    func count(_ text: String) -> Int {
        logged.value.withLock { $0.filter { $0.contains(text) }.count }
    }

    /// The last `count` log lines, for a failure's message.
    func lastLines(_ count: Int) -> [String] {
        logged.value.withLock { Array($0.suffix(count)) }
    }

    func stop() {
        bridge.stop(timeout: 1)
    }
}
