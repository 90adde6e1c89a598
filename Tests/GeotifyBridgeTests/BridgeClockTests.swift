import Foundation
@testable import GeotifyBridge
import GeotifyTestSupport
import GeotifyTime
import Testing

/// The bridge's housekeeping on a clock the test moves: statistics every `statsInterval`,
/// the fence file looked at every second, one housekeeping however quickly the bridge is
/// stopped and started. Nothing sleeps; "nothing came" is told by a later command's
/// reply, which the bridge publishes after everything it decided before.
@Suite("Bridge housekeeping on the test's clock", .serialized, .waiting)
struct BridgeClockTests {
    /// Sends a command and waits for its reply: everything published before it is then here.
    func settle(_ harness: BridgeHarness) throws {
        let marker = UUID().uuidString
        try harness.observer.publish("geotify/cmd/alice/phone", #"{"action":"list","id":"\#(marker)"}"#)
        #expect(harness.observer.waitForMessage(on: "geotify/reply/alice/phone", where: { $0.text.contains(marker) }) != nil)
    }

    func statistics(_ harness: BridgeHarness) -> Int {
        harness.observer.messages.filter { $0.topic == "geotify/stats" }.count
    }

    @Test func statisticsComeEveryStatsIntervalOfTheClock() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock) { $0.statsInterval = 10 }
        clock.advance(by: 9.8)
        try settle(harness)
        #expect(statistics(harness) == 0, "not before 10 s")
        clock.advance(by: 0.4)
        #expect(harness.observer.waitForMessage(on: "geotify/stats") != nil)
        clock.advance(by: 10)
        #expect(harness.observer.waitForMessages(on: "geotify/stats", count: 2).count == 2)
        try settle(harness)
        #expect(statistics(harness) == 2)
    }

    @Test func aQuickStopAndStartLeavesOneHousekeeping() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock) { $0.statsInterval = 10 }
        harness.stopBridge()
        try harness.startBridge()
        clock.advance(by: 10.2)
        #expect(harness.observer.waitForMessage(on: "geotify/stats") != nil)
        try settle(harness)
        #expect(statistics(harness) == 1, "the first start's housekeeping ended with its stop")
    }

    @Test func theFenceFileIsLookedAtEverySecondOfTheClock() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock)
        let edited = BridgeHarness.fences.replacingOccurrences(of: "Welcome home", with: "Home again")
        try edited.write(to: harness.fencesURL, atomically: true, encoding: .utf8)
        try settle(harness)
        #expect(harness.bridge?.fenceBook.fences(of: "alice/phone").first?.note == "Welcome home", "not looked at yet")
        clock.advance(by: 1.1)
        #expect(harness.bridge?.fenceBook.fences(of: "alice/phone").first?.note == "Home again")
    }

    @Test func lastFixesAreSavedEveryFewSecondsOfTheClock() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock)
        try harness.ownTracks("alice/phone", 52.50, 13.405, tst: 1)
        try harness.ownTracks("alice/phone", 52.501, 13.405, tst: 2)
        try settle(harness)
        let database = harness.stateDirectory + "/state.sqlite"
        let saved = { try runCommand("sqlite3", [database, "SELECT tst FROM device WHERE id = 'alice/phone'"]).trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(try saved() == "\(harness.base + 1).0", "a move that crosses nothing is not saved at once")
        clock.advance(by: 5.2)
        // The housekeeping asks each lane to save; the lane does so on its own queue.
        #expect(waitUntil { (try? saved()) == "\(harness.base + 2).0" }, "saved after five seconds of the clock")
    }
}
