import Foundation
import GeotifyBridge
import GeotifyDelivery
import GeotifyStore
import GeotifyTestSupport
import GeotifyTime
import Testing

/// A target that always fails, through the whole bridge (a real mosquitto, the settings
/// file, the state database, the delivery worker) with its clock a `ManualScheduler`:
/// the retry window passes by advancing the clock, never by waiting. The delivery ends
/// in the dead letters after the window, reported once on `geotify/error`, counted in
/// `geotify/stats`, and shown by `geotify notify status`.
@Suite("Dead letters through the bridge", .waiting)
struct DeadLetterTests {
    let retryFor = 600.0
    /// How far the clock moves at a time; the stats report comes once per step.
    let step = 30.0

    @Test(.longWaiting) func aTargetThatAlwaysFailsEndsInTheDeadLettersAfterItsWindowReportedOnce() throws {
        let scenario = try DeliveryScenario("delivery-dead", devices: 1)
        try scenario.observer.subscribe("+/stats")
        let receiver = try WebhookReceiver(["/hook": .fail])
        let settingsURL = scenario.directory.appendingPathComponent("dead.json")
        try """
            {"broker": "mqtt://127.0.0.1:\(scenario.broker.port)", "clientId": "dead", "topicPrefix": "dead",
             "fences": "\(scenario.fencesURL.path)", "stateDir": "state-dead", "statsInterval": \(step),
             "notify": {"retryFor": \(retryFor), "targets": [\(DeliveryScenario.webhook("hook", url: receiver.url("/hook")))]}}
            """.write(to: settingsURL, atomically: true, encoding: .utf8)
        let scheduler = ManualScheduler(now: Date().timeIntervalSince1970.rounded(.down))
        let bridge = Bridge(settings: try Settings.load(path: settingsURL.path), logger: Logger(level: .debug, sink: { _ in }), scheduler: scheduler)
        try bridge.start()
        defer { bridge.stop(timeout: 1) }
        #expect(waitUntil { scenario.observer.messages.contains { $0.topic == "dead/status" && $0.text == "online" } })
        let statePath = scenario.directory.appendingPathComponent("state-dead/state.sqlite").path
        let queue = try DeliveryQueue(path: statePath)
        let device = scenario.devices[0]
        try scenario.publish(device, step: 0)
        try scenario.publish(device, step: 1)

        /// Whether every answered attempt is recorded: the row's attempts, or the dead letter.
        func recorded() -> Bool {
            let answered = receiver.exchanges.filter { $0.status != nil }.count
            guard answered > 0, let counts = try? queue.counts().first else { return false }
            return counts.dead == 1 || (try? queue.heads().first?.attempts) == answered
        }
        #expect(waitUntil(recorded))
        let queued = try #require(try queue.heads().first).queued
        while (try queue.counts().first?.dead ?? 0) == 0, scheduler.now - queued < retryFor + RetrySchedule().maximum + step {
            scheduler.advance(by: step)
            #expect(waitUntil(recorded))
        }

        let counts = try #require(try queue.counts().first)
        #expect(counts.dead == 1 && counts.pending == 0 && counts.retrying == 0 && counts.delivered == 0)
        let attempts = receiver.exchanges.count
        #expect(counts.lastError?.hasPrefix("HTTP 503: down for maintenance; gave up after \(attempts) attempts in") == true, "\(counts.lastError ?? "")")
        let died = try runCommand("sqlite3", [statePath, "SELECT died - queued FROM delivery_dead"])
        let window = try #require(Double(died.trimmingCharacters(in: .whitespacesAndNewlines)))
        // The last attempt is made at the window's end; its answer is recorded when it comes,
        // which under load may be a few of the clock's steps later (the clock does not wait
        // for an attempt that has not reached the receiver yet).
        print("dead-lettered \(window) s after it was queued (retryFor \(retryFor) s), after \(attempts) attempts")
        #expect(window >= retryFor && window <= retryFor + RetrySchedule().maximum + step, "dead letter after \(window) s")

        // Two more hours: nothing is tried again, nothing reported again. The stats report
        // at the end is the mark that everything published before it has arrived.
        for _ in 0..<240 { scheduler.advance(by: step) }
        let end = scheduler.now.rounded(.down)
        let stats = try #require(waitFor(stats: "dead/stats", since: end - step, observer: scenario.observer))
        #expect(receiver.exchanges.count == attempts)
        let errors = scenario.observer.messages.filter { $0.topic == "dead/error" }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
        }
        #expect(errors.count == 1)
        #expect(errors.first?["error"] as? String == "delivery_failed")
        let message = errors.first?["message"] as? String ?? ""
        #expect(message.contains(scenario.eventID(device, step: 1)) && message.contains("hook") && message.contains("gave up after"), "\(message)")
        #expect(bridge.counters.snapshot["errors.delivery_failed"] == 1)
        #expect(((stats["counters"] as? [String: Any])?["errors"] as? [String: Any])?["delivery_failed"] as? Int == 1)

        let status = try runGeotify(["notify", "status", "--config", settingsURL.path], in: scenario.directory)
        #expect(status.status == 0)
        let row = status.output.split(separator: "\n").first { $0.hasPrefix("hook ") }.map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        #expect(row.map { Array($0[1...4]) } == ["0", "0", "0", "1"], "delivered, pending, retrying, dead: \(status.output)")
        #expect(status.output.contains("gave up after \(attempts) attempts"))
    }

    /// The newest stats report on `topic` made at `since` or later, parsed (waiting up to 10 s).
    func waitFor(stats topic: String, since: Double, observer: TestClient) -> [String: Any]? {
        var found: [String: Any]?
        waitUntil {
            found = observer.messages.filter { $0.topic == topic }.compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
            }.last { ($0["tst"] as? Double ?? 0) >= since }
            return found != nil
        }
        return found
    }
}
