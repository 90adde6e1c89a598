import Foundation
import GeotifyMQTT
import Testing
@testable import GeotifyBridge

/// A flood of refused messages costs the log a bounded number of lines
/// (`RefusalLogBudget`), while every refusal is still counted and answered, and the first
/// refusal after a quiet period is logged in full; through the pure lane core, on the
/// fixture's clock.
@Suite("Lane core: refusals in the log")
struct LaneCoreRefusalLogTests {
    /// A garbage position of a made-up device, `bad` ones out of range.
    func garbage(_ number: Int, in lane: LaneFixture) -> Inbound {
        let payload = number % 15 == 0 ? #"{"_type":"location","lat":95,"lon":13}"# : "not json \(number)"
        return lane.inbound("mallory/\(number)", topic: "owntracks/mallory/\(number)", payload: Array(payload.utf8), route: .location(.ownTracks))
    }

    /// A command no bridge knows.
    func explode(in lane: LaneFixture) -> Inbound {
        Inbound(
            route: .command, device: "alice/phone",
            message: MQTTMessage(topic: "geotify/cmd/alice/phone", payload: Array(#"{"action":"explode"}"#.utf8)), arrival: lane.now)
    }

    /// 10 000 refusals in 5 s, as the red team sent them (3.7 MB of log before): 10 lines
    /// of each code, then one summary when the minute is over, from the tick alone.
    @Test func aFloodOfRefusalsCostsABoundedNumberOfLinesAndOneSummary() throws {
        var lane = try LaneFixture(fences: LaneCoreTests.fences)
        let start = lane.now
        var lines: [LogEntry] = []
        var errors = 0
        var replies = 0
        for burst in 0..<200 {
            lane.now = start + Double(burst) / 40
            let batch = (0..<50).map { number in
                let message = burst * 50 + number
                return message % 25 == 24 ? explode(in: lane) : garbage(message, in: lane)
            }
            let effects = lane.handle(batch)
            lines += effects.log
            errors += effects.direct.filter { $0.topic == "geotify/error" && !String(decoding: $0.payload, as: UTF8.self).contains("unknown_action") }.count
            replies += effects.direct.filter { $0.topic == "geotify/reply/alice/phone" }.count
        }
        #expect(errors == 9_600, "every refused position reported on geotify/error")
        #expect(replies == 400, "every refused command answered")
        let codes = ["invalid_json", "out_of_range", "unknown_action"]
        for code in codes {
            #expect(lines.filter { $0.message.contains(code) }.count == RefusalLogBudget.linesPerCode, "\(code)")
        }
        #expect(lines.count == codes.count * RefusalLogBudget.linesPerCode, "\(lines.map(\.message).suffix(5))")
        #expect(lines.allSatisfy { $0.level == .warning && $0.message.hasPrefix("refused the ") })
        lane.now = start + 59.8
        #expect(lane.advance(0).log.isEmpty, "not before the minute is over")
        lane.now = start + 60
        let summary = lane.advance(0).log
        #expect(summary == [LogEntry(
            level: .warning,
            message: "suppressed 9970 more refusals in the last 60 s (invalid_json 8923, out_of_range 657, unknown_action 390); the statistics count every one")])
        #expect(lane.advance(0.2).log.isEmpty, "said once")
    }

    /// After a quiet period the first refusal is logged in full at once, of a new kind and
    /// of the kind that flooded alike.
    @Test func theFirstRefusalAfterAQuietPeriodIsLoggedInFull() throws {
        var lane = try LaneFixture(fences: LaneCoreTests.fences)
        for number in 1...100 { _ = lane.handle([garbage(number, in: lane)]) }
        #expect(lane.advance(60).log.count == 1, "the summary")
        #expect(lane.advance(600).log.isEmpty, "quiet")
        let missing = lane.handle([
            lane.inbound("alice/phone", topic: "owntracks/alice/phone", payload: Array(#"{"_type":"location","lon":13}"#.utf8), route: .location(.ownTracks))
        ])
        #expect(missing.log.map(\.message) == ["refused the message on owntracks/alice/phone: missing_field: \(try #require(missing.refusalMessage))"])
        lane.now += 1
        let again = lane.handle([garbage(7, in: lane)])
        #expect(again.log.map(\.message) == ["refused the message on owntracks/mallory/7: invalid_json: \(try #require(again.refusalMessage))"])
    }

    /// At logLevel debug the operator asked for everything: every refusal is logged.
    @Test func atLogLevelDebugEveryRefusalIsLogged() throws {
        var lane = try LaneFixture(fences: LaneCoreTests.fences) { $0.logLevel = .debug }
        var lines = 0
        for number in 1...100 { lines += lane.handle([garbage(number, in: lane)]).log.count }
        #expect(lines == 100)
        #expect(lane.advance(60).log.isEmpty, "nothing to sum up")
    }

    /// Refusals are warnings: at logLevel warning they are logged within the budget as at
    /// info, with the summary; at error not at all, not even the summary.
    @Test(arguments: [(Logger.Level.info, true), (.warning, true), (.error, false)])
    func refusalsAreLoggedAsWarnings(level: Logger.Level, logged: Bool) throws {
        var lane = try LaneFixture(fences: LaneCoreTests.fences) { $0.logLevel = level }
        var lines: [LogEntry] = []
        for number in 1...100 { lines += lane.handle([garbage(number, in: lane)]).log }
        // `garbage` makes every 15th out_of_range, the others invalid_json.
        let outOfRange = (1...100).filter { $0 % 15 == 0 }.count
        let budget = RefusalLogBudget.linesPerCode
        #expect(lines.count == (logged ? min(100 - outOfRange, budget) + min(outOfRange, budget) : 0))
        #expect(lines.allSatisfy { $0.level == .warning })
        let summary = lane.advance(60).log
        #expect(summary.count == (logged ? 1 : 0))
        #expect(summary.allSatisfy { $0.level == .warning && $0.message.hasPrefix("suppressed ") })
    }
}

extension LaneEffects {
    /// The message of the first refusal reported on `geotify/error`.
    fileprivate var refusalMessage: String? {
        direct.first { $0.topic == "geotify/error" }
            .flatMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }?["message"] as? String
    }
}
