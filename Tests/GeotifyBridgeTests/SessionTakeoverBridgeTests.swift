import Foundation
@testable import GeotifyBridge
import GeotifyJSON
import GeotifyTestSupport
import GeotifyTime
import Testing

/// A second client with the bridge's client id on a real mosquitto (2.0.11 on Debian 12,
/// which just closes the old connection): the two throw each other off, and the bridge
/// says why in its log, in its `errors.session_taken_over` counter and so in its
/// statistics, which `geotify status` reads.
@Suite("A session taken over, seen by the bridge", .serialized, .timeLimit(.minutes(2)), .waiting)
struct SessionTakeoverBridgeTests {
    @Test(.longWaiting) func aSecondClientWithTheBridgesClientIDIsLoggedAndCounted() throws {
        // The bridge and the intruder reconnect on the test's clock: moving it on while
        // the test waits makes them throw each other off at once, not every second or two.
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock) { $0.statsInterval = 1 }
        let clientID = harness.settings.clientID
        let intruder = try TestClient(port: harness.broker.port, clientID: clientID, clock: clock)
        defer { intruder.disconnect() }
        let prefix = "another client took over this bridge's session at \(harness.settings.broker) (client id \"\(clientID)\"): session taken over"
        // Each reconnects after its back-off and throws the other off; the third short
        // connection in a row tells the bridge it is a takeover.
        #expect(waitUntil(advancing: clock, by: 1, timeout: 30) { harness.logLines.all.contains { $0.contains(prefix) } },
                "\(harness.logLines.all.suffix(20))")
        #expect(harness.logLines.all.contains { $0.contains("Give each bridge its own clientId and set use_username_as_clientid in the broker (docs/security.md)") })
        let counted = harness.bridge?.counters.value(.errors(.sessionTakenOver)) ?? 0
        #expect(counted >= 1)

        // The statistics the bridge publishes (and `geotify status` prints) carry it.
        let reported = waitUntil(advancing: clock, by: 1, timeout: 30) {
            harness.observer.messages.contains { message in
                guard message.topic == "geotify/stats", let report = try? StatsReport(parsing: message.payload) else { return false }
                return (report.counters["errors.session_taken_over"] ?? 0) >= 1
            }
        }
        #expect(reported, "a statistics report with errors.session_taken_over")
    }
}
