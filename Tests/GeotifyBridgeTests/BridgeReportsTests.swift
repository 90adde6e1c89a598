@testable import GeotifyBridge
import GeotifyCore
import GeotifyMQTT
import GeotifyStore
import GeotifyTime
import Testing

/// What the bridge's reports log of messages libmosquitto refused: each is counted by the
/// publisher, and a refusal that lasts (every message refused the same way) logs its
/// first lines in full and then one summary an interval, not a line a message.
@Suite("The bridge's reports")
struct BridgeReportsTests {
    let clock = ManualScheduler()
    let lines = LogLines()
    let counters = Counters()

    func reports(logLevel: Logger.Level = .info) -> BridgeReports {
        var settings = Settings()
        settings.logLevel = logLevel
        let topics = Topics()
        let messages = OutboundMessages(topics: topics)
        let health = StateHealth(logger: Logger(level: .error, sink: { _ in }), counters: counters, messages: messages, uptime: { 0 })
        return BridgeReports(
            settings: settings, topics: topics, messages: messages, publisher: Publisher(counters: counters, health: health),
            counters: counters, logger: Logger(level: logLevel, sink: lines.append), scheduler: clock)
    }

    /// A refusal of each message on its own topic (a topic libmosquitto refuses): the
    /// budget goes by libmosquitto's error code, so many topics are one key.
    func refused(_ number: Int) -> (OutboxMessage, Publisher.NotHandedOver) {
        let topic = "geotify/event/alice/\(number)/#"
        return (
            OutboxMessage(topic: topic, payload: Array("{}".utf8), qos: 1, retain: false),
            .refused(MQTTError(operation: "publish to \(topic)", code: 3, message: "topic must not contain the wildcards + or #")))
    }

    @Test func messagesLibmosquittoRefusedAreLoggedWithinABudget() {
        let reports = reports()
        for number in 0..<25 { reports.notHandedOver(refused(number).0, refused(number).1) }
        let inFull = lines.all.filter { $0.contains("could not publish to geotify/event/alice/") }
        #expect(inFull.count == LogBudget<Int32>.linesPerKey)
        #expect(inFull.first?.hasSuffix("could not publish to geotify/event/alice/0/#: publish to geotify/event/alice/0/#: topic must not contain the wildcards + or # (code 3)") == true,
                "\(inFull.first ?? "")")
        reports.logSummaries(at: clock.uptime + 59)
        #expect(lines.all.count == LogBudget<Int32>.linesPerKey, "no summary before the interval ends")
        reports.logSummaries(at: clock.uptime + 60)
        #expect(lines.all.last?.hasSuffix("suppressed 15 more lines about messages not published in the last 60 s (code 3 15); each was counted under errors.publish") == true,
                "\(lines.all.last ?? "")")
    }

    /// At the debug level every line is logged, as the operator asked.
    @Test func atTheDebugLevelEveryRefusedMessageIsLogged() {
        let reports = reports(logLevel: .debug)
        for number in 0..<25 { reports.notHandedOver(refused(number).0, refused(number).1) }
        #expect(lines.all.filter { $0.contains("could not publish to") }.count == 25)
    }
}
