@testable import GeotifyBridge
import GeotifyStore
import GeotifyTime
import Testing

/// Whether the state database can be written: a failure is reported (logged and published
/// on `geotify/error`) when writes start failing, not on every failed write, and again
/// only a `quietPeriod` after the last report; the recovery is logged and counted once.
/// Time only as the test's clock gives it.
@Suite("State database health")
struct StateHealthTests {
    let clock = ManualScheduler()
    let lines = LogLines()
    let counters = Counters()
    let health: StateHealth

    init() {
        let clock = clock
        health = StateHealth(
            logger: Logger(level: .info, sink: lines.append), counters: counters, messages: OutboundMessages(topics: Topics()),
            uptime: { clock.uptime })
    }

    /// A failed write; returns what it published on `geotify/error`.
    func fail() -> [OutboxMessage] {
        var published: [OutboxMessage] = []
        health.failed("the device states", StoreError("save state", "database or disk is full"), publish: { published.append($0) })
        return published
    }

    /// Writes that keep failing are one report, however long they fail, and each failure
    /// is counted.
    @Test func writesThatKeepFailingAreReportedOnce() {
        #expect(fail().map(\.topic) == ["geotify/error"])
        #expect(health.problem?.hasPrefix("could not save the device states: save state: database or disk is full") == true)
        clock.advance(by: StateHealth.quietPeriod + 1)
        #expect(fail().isEmpty, "still failing, a quiet period later: not reported again")
        #expect(counters.value(.errors(.stateWrite)) == 2)
        #expect(lines.all.filter { $0.contains("could not save") }.count == 1)
    }

    /// A disk at its limit lets a small write through between failed ones: a failure
    /// after a recovery is reported again only once `quietPeriod` has passed since the
    /// last report, at exactly that time.
    @Test func aFailureAfterARecoveryIsReportedAgainOnlyAQuietPeriodAfterTheLastReport() {
        #expect(fail().count == 1)
        health.succeeded()
        clock.advance(by: StateHealth.quietPeriod - 0.5)
        #expect(fail().isEmpty, "within the quiet period of the first report")
        health.succeeded()
        clock.advance(by: 0.5)
        #expect(fail().count == 1, "exactly a quiet period after the first report")
    }

    /// The recovery is logged and counted once, when writes were failing; a write that
    /// works while none failed says nothing.
    @Test func theRecoveryIsLoggedAndCountedOnce() {
        health.succeeded()
        #expect(counters.value(.stateWriteRecoveries) == 0)
        _ = fail()
        health.succeeded()
        health.succeeded()
        #expect(health.problem == nil)
        #expect(counters.value(.stateWriteRecoveries) == 1)
        #expect(lines.all.filter { $0.contains("the state database can be written again") }.count == 1)
    }
}
