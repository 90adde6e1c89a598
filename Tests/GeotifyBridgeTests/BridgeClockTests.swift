import Foundation
@testable import GeotifyBridge
import GeotifyTestSupport
import GeotifyTime
import Testing

/// The bridge's housekeeping on a clock the test moves: statistics every `statsInterval`
/// (none at 0), the fence file looked at every second and read every ten, the last fixes
/// saved a share a tick, a reminder every 30 s while the broker is away, one housekeeping
/// however quickly the bridge is stopped and started. Nothing sleeps; "nothing came" is
/// told by a later command's reply, which the bridge publishes after everything it
/// decided before.
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

    /// The messages of one burst count as arrived when its first did (the clock is read
    /// once a burst): the next burst reads it again. A position timed an hour after the
    /// first, sent once the clock has moved on an hour, is on time, not from the future.
    @Test func eachBurstReadsTheClockAgain() throws {
        let start = Date().timeIntervalSince1970.rounded()
        let clock = ManualScheduler(now: start)
        let harness = try BridgeHarness(clock: clock) { $0.acceptance.maximumFutureSkew = 60 }
        try harness.observer.publish("owntracks/alice/phone", #"{"_type":"location","lat":1,"lon":2,"tst":\#(Int(start))}"#)
        try settle(harness)
        clock.advance(by: 3_600)
        try harness.observer.publish("owntracks/alice/phone", #"{"_type":"location","lat":1,"lon":2.001,"tst":\#(Int(start) + 3_600)}"#)
        try settle(harness)
        #expect(harness.bridge?.counters.value(.fixesEvaluated) == 2)
        #expect(harness.bridge?.counters.value(.fixesDropped(.future)) == 0)
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

    @Test func aStatsIntervalOfZeroTurnsTheReportsOff() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock) { $0.statsInterval = 0 }
        clock.advance(by: 30)
        try settle(harness)
        #expect(statistics(harness) == 0)
    }

    /// A report's `devices` are those every lane keeps state for, added up: two devices
    /// in two lanes are two.
    @Test func theStatisticsCountTheDevicesOfEveryLane() throws {
        try #require(MessageRouter.lane(of: "alice/phone", among: 2) != MessageRouter.lane(of: "bob/phone", among: 2))
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock) {
            $0.statsInterval = 10
            $0.lanes = 2
        }
        try harness.ownTracks("alice/phone", 52.50, 13.405, tst: 1)
        try harness.ownTracks("bob/phone", 48.0, 11.0, tst: 1)
        #expect(waitUntil { harness.bridge?.counters.value(.fixesEvaluated) == 2 })
        clock.advance(by: 10.2)
        let message = try #require(harness.observer.waitForMessage(on: "geotify/stats"))
        #expect(try StatsReport(parsing: message.payload).devices == 2)
    }

    /// A stop and a start begin the statistics' interval again: a bridge started again
    /// after six seconds reports ten seconds after its new start, not four.
    @Test func aStartAgainBeginsTheStatisticsIntervalAgain() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock) { $0.statsInterval = 10 }
        clock.advance(by: 6)
        harness.stopBridge()
        try harness.startBridge()
        clock.advance(by: 4.2)
        try settle(harness)
        #expect(statistics(harness) == 0, "4.2 s after the new start")
        clock.advance(by: 6)
        #expect(harness.observer.waitForMessage(on: "geotify/stats") != nil, "10.2 s after it")
    }

    /// A stop ends the housekeeping: a bridge stopped and started again (the same
    /// object, so the first start's timer would still find it running) ticks once every
    /// 0.2 s, not twice, so the fence file is looked at after five ticks (1 s) of the new
    /// start, not after 0.6 s; and a stopped bridge leaves nothing waiting on its clock.
    @Test func aStopEndsTheHousekeeping() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock)
        let bridge = try #require(harness.bridge)
        bridge.stop()
        #expect(clock.pendingCount == 0, "nothing of the stopped bridge waits on the clock")
        try bridge.start()
        let edited = BridgeHarness.fences.replacingOccurrences(of: "Welcome home", with: "Home again")
        try edited.write(to: harness.fencesURL, atomically: true, encoding: .utf8)
        clock.advance(by: 0.8)
        #expect(bridge.fenceBook.fences(of: "alice/phone").first?.note == "Welcome home", "four ticks: not looked at yet")
        clock.advance(by: 0.3)
        #expect(bridge.fenceBook.fences(of: "alice/phone").first?.note == "Home again")
    }

    /// An edit that keeps the file's size and modification time (and inode) is not seen
    /// by the look every second, but by the reading of its contents every ten seconds.
    @Test func anEditThatKeepsSizeAndTimeIsReadWithinTenSecondsOfTheClock() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock)
        var before = stat()
        #expect(stat(harness.fencesURL.path, &before) == 0)
        let edited = BridgeHarness.fences.replacingOccurrences(of: "Welcome home", with: "Welcome back")
        let handle = try FileHandle(forWritingTo: harness.fencesURL)
        try handle.write(contentsOf: Data(edited.utf8))
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, harness.fencesURL.path, &times, 0) == 0)
        clock.advance(by: 5)
        #expect(harness.bridge?.fenceBook.fences(of: "alice/phone").first?.note == "Welcome home", "size and time unchanged")
        clock.advance(by: 5.1)
        #expect(harness.bridge?.fenceBook.fences(of: "alice/phone").first?.note == "Welcome back")
    }

    /// While the broker is away, the reminder that the bridge waits for it comes every
    /// 30 s of the clock, not at every look.
    @Test func theReminderThatTheBrokerIsAwayComesEveryThirtySeconds() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let closed = try ClosedPort()
        defer { withExtendedLifetime(closed) {} }
        let bridge = try BridgeUnderTest(port: closed.port, clientID: "geotify-away", clock: clock)
        try bridge.start()
        for _ in 0..<65 { clock.advance(by: 1) }
        #expect(bridge.logged("still waiting for the broker").count == 2, "\(bridge.logged("still waiting"))")
    }

    /// A notification decided while the outbox's hand-over mark cannot be written (a
    /// failing disk) waits; once the mark can be written again, the next tick of the
    /// clock sends it, with nothing else arriving to pump the publisher.
    @Test func aNotificationHeldByAnUnwritableMarkGoesOnTheNextTickOnceItCanBeWritten() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock)
        try harness.ownTracks("alice/phone", 52.50, 13.405, tst: 1)
        try settle(harness)
        let mark = harness.stateDirectory + "/outbox.handed"
        try reopen(mark, flags: O_RDONLY)
        try harness.ownTracks("alice/phone", 52.52, 13.405, tst: 60)
        // The reply is not persisted, so it goes; the entry, decided before it, waits.
        try settle(harness)
        #expect(harness.observer.messages.filter { $0.topic == "geotify/event/alice/phone" }.isEmpty, "held back by the mark")
        try reopen(mark, flags: O_RDWR)
        clock.advance(by: Housekeeper.tickInterval)
        let events = harness.events("alice/phone", count: 1)
        #expect(events.first?["event"] as? String == "enter", "\(events)")
    }

    /// The last fixes kept only in memory are saved a share a tick (64) from the tick that
    /// starts the saving until all are: with more, the rest follow on the next tick, not
    /// five seconds later.
    @Test func lastFixesBeyondOneTicksShareAreSavedOnTheNextTick() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock) { $0.lanes = 1 }
        let devices = (0..<100).map { "cart/\($0)" }
        for tst in [1, 2] {
            for device in devices {
                try harness.observer.publish("geotify/location/\(device)", #"{"lat":10,"lon":10,"acc":5,"tst":\#(harness.base + tst)}"#)
            }
        }
        try settle(harness)
        let database = harness.stateDirectory + "/state.sqlite"
        let saved = {
            Int((try? runCommand("sqlite3", [database, "SELECT count(*) FROM device WHERE tst = \(harness.base + 2)"]))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -1
        }
        #expect(saved() == 0, "a move that crosses nothing is not saved at once")
        clock.advance(by: 5.1)
        #expect(waitUntil { saved() == 64 }, "one share at the fifth second: \(saved())")
        clock.advance(by: 0.2)
        #expect(waitUntil { saved() == devices.count }, "the rest at the next tick: \(saved())")
    }

    /// Messages refused for their topic alone (the bridge's own check, before any lane)
    /// are logged in full ten to a code (`RefusalLogBudget`), and the housekeeping sums up
    /// the rest once the minute is over, with no more refusals coming; each one is still
    /// reported on `geotify/error`.
    @Test func refusalsForTheTopicAloneAreSummedUpOnceTheMinuteIsOver() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock)
        let deep = "geotify/location/" + Array(repeating: "x", count: 16).joined(separator: "/")
        for _ in 0..<25 { try harness.observer.publish(deep, "{}") }
        #expect(harness.observer.waitForMessages(on: "geotify/error", count: 25).count == 25)
        let refused = { harness.logLines.all.filter { $0.contains("refused the message on \(deep): invalid_topic") } }
        #expect(refused().count == RefusalLogBudget.linesPerCode)
        let summary = "suppressed 15 more refusals in the last 60 s (invalid_topic 15); the statistics count every one"
        clock.advance(by: 59.8)
        try settle(harness)
        #expect(!harness.logLines.all.contains { $0.contains("suppressed") }, "not before the minute is over")
        clock.advance(by: 0.4)
        #expect(waitUntil { harness.logLines.all.contains { $0.hasSuffix(summary) } }, "\(harness.logLines.all.suffix(5))")
        #expect(harness.bridge?.counters.value(.errors(.invalidTopic)) == 25)
        #expect(refused().count == RefusalLogBudget.linesPerCode)
    }
}
