import Testing
@testable import GeotifyBridge

/// A tracker hopping in and out of its fence causes a notification with each position,
/// each a log line: the lane logs 10 a device a minute in full and sums up the rest,
/// while every notification is still published; another device's lines are its own.
@Suite("Lane core: notifications in the log")
struct LaneCoreNotificationLogTests {
    @Test func aTrackerHoppingInAndOutCostsTheLogTenLinesAMinuteAndOneSummary() throws {
        var lane = try LaneFixture(fences: LaneCoreTests.fences)
        let start = lane.now
        _ = lane.ownTracks("alice/phone", LaneCoreTests.away.0, LaneCoreTests.away.1)
        _ = lane.ownTracks("bob/phone", LaneCoreTests.away.0, LaneCoreTests.away.1)
        var lines: [LogEntry] = []
        var events = 0
        // 10 000 positions in 5 s, in bursts of 50, every one in or out of home.
        for burst in 0..<200 {
            lane.now = start + Double(burst) / 40
            let batch = (0..<50).map { number in
                let spot = number % 2 == 0 ? LaneCoreTests.home : LaneCoreTests.away
                return lane.ownTracksPosition("alice/phone", spot.0, spot.1)
            }
            let effects = lane.handle(batch)
            lines += effects.log
            events += effects.events.count
        }
        let bob = lane.ownTracks("bob/phone", LaneCoreTests.school.0, LaneCoreTests.school.1)
        #expect(events == 10_000, "every notification published")
        #expect(lines.count == 10 && lines.allSatisfy { $0.level == .info && $0.message.hasPrefix("alice/phone ") })
        #expect(bob.log.map(\.message) == ["bob/phone enter school (badge 1)"], "another device's line in full")
        lane.now = start + 59.8
        #expect(lane.advance(0).log.isEmpty, "not before the minute is over")
        lane.now = start + 60
        #expect(lane.advance(0).log == [LogEntry(
            level: .info,
            message: "suppressed 9990 more notification lines in the last 60 s (alice/phone 9990); each notification was published on geotify/event/<device>")])
        #expect(lane.advance(0.2).log.isEmpty, "said once")
    }

    /// At logLevel debug the operator asked for everything: every notification is logged.
    @Test func atLogLevelDebugEveryNotificationIsLogged() throws {
        var lane = try LaneFixture(fences: LaneCoreTests.fences) { $0.logLevel = .debug }
        _ = lane.ownTracks("alice/phone", LaneCoreTests.away.0, LaneCoreTests.away.1)
        var lines = 0
        for number in 0..<100 {
            let spot = number % 2 == 0 ? LaneCoreTests.home : LaneCoreTests.away
            lines += lane.ownTracks("alice/phone", spot.0, spot.1).log.filter { $0.message.hasPrefix("alice/phone e") }.count
        }
        #expect(lines == 100)
        #expect(lane.advance(60).log.filter { $0.message.hasPrefix("suppressed") }.isEmpty, "nothing to sum up")
    }
}
