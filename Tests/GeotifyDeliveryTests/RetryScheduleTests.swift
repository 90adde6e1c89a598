import GeotifyDelivery
import GeotifyStore
import Testing

@Suite("Retry schedule")
struct RetryScheduleTests {
    let schedule = RetrySchedule(first: 10, maximum: 900)

    func row(attempts: Int, queued: Double = 0) -> DeliveryRow {
        DeliveryRow(id: 1, entry: Samples.entry(target: "t"), queued: queued, due: queued, attempts: attempts, lastError: nil)
    }

    @Test func backOffDoublesUpToTheCapWithEqualJitter() {
        #expect((1...9).map { schedule.delay(afterFailures: $0, random: 0.999_999) }.map { $0.rounded() } == [10, 20, 40, 80, 160, 320, 640, 900, 900])
        #expect((1...9).map { schedule.delay(afterFailures: $0, random: 0) } == [5, 10, 20, 40, 80, 160, 320, 450, 450])
        #expect(schedule.delay(afterFailures: 1000, random: 0.5) == 675)
    }

    @Test func aRetryInsideTheWindowIsScheduledAfterTheBackOff() {
        #expect(schedule.decide(row: row(attempts: 0), retryFor: 86_400, reason: "HTTP 503", retryAfter: nil, now: 100, random: 0)
            == .retry(at: 105))
        #expect(schedule.decide(row: row(attempts: 3), retryFor: 86_400, reason: "HTTP 503", retryAfter: nil, now: 100, random: 0)
            == .retry(at: 140))
    }

    @Test func theLastAttemptIsMadeAtTheEndOfTheWindowThenTheDeliveryDies() {
        #expect(schedule.decide(row: row(attempts: 20), retryFor: 3600, reason: "HTTP 503", retryAfter: nil, now: 3500, random: 0.5)
            == .retry(at: 3600))
        #expect(schedule.decide(row: row(attempts: 21), retryFor: 3600, reason: "HTTP 503", retryAfter: nil, now: 3600, random: 0.5)
            == .deadLetter(reason: "HTTP 503; gave up after 22 attempts in 1h"))
    }

    @Test func aRetryAfterReplacesTheBackOffButNotTheWindow() {
        #expect(schedule.decide(row: row(attempts: 0), retryFor: 3600, reason: "HTTP 429", retryAfter: 120, now: 100, random: 0)
            == .retry(at: 220))
    }

    @Test func aRetryAfterPastTheWindowMovesTheLastAttemptToItsEndAndIsNamedAsAsked() {
        #expect(schedule.decide(row: row(attempts: 1), retryFor: 3600, reason: "HTTP 429", retryAfter: 7200, now: 100, random: 0)
            == .retry(at: 3600))
        #expect(schedule.decide(row: row(attempts: 2), retryFor: 3600, reason: "HTTP 429", retryAfter: 7200, now: 3600, random: 0)
            == .deadLetter(reason: "HTTP 429; gave up after 3 attempts in 1h: the target asked to wait 2h, past the retry window"))
        // Forty days asked, not a week: the message says what the target asked.
        let asked = try! #require(RetryAfter.seconds("3456000", now: 0))
        #expect(schedule.decide(row: row(attempts: 1), retryFor: 86_400, reason: "HTTP 503", retryAfter: asked, now: 86_400, random: 0)
            == .deadLetter(reason: "HTTP 503; gave up after 2 attempts in 1d: the target asked to wait 40d, past the retry window"))
    }

    @Test func aRetryAfterOfZeroAtTheWindowsEndIsNotNamedAsAWait() {
        #expect(schedule.decide(row: row(attempts: 2), retryFor: 3600, reason: "HTTP 503", retryAfter: 0, now: 3600, random: 0)
            == .deadLetter(reason: "HTTP 503; gave up after 3 attempts in 1h"))
    }

    @Test func aRetryAfterShorterThanTheBackOffIsLengthenedToIt() {
        // `Retry-After: 0` (or an HTTP date in the past, read as 0) on every attempt: the
        // attempts are still spaced by the back-off, 10 s, 20 s, ... up to 15 minutes.
        for attempts in 0..<10 {
            let backOff = schedule.delay(afterFailures: attempts + 1, random: 0.5)
            #expect(schedule.decide(row: row(attempts: attempts), retryFor: 86_400, reason: "HTTP 503", retryAfter: 0, now: 1000, random: 0.5)
                == .retry(at: 1000 + backOff))
        }
        #expect(schedule.decide(row: row(attempts: 3), retryFor: 86_400, reason: "HTTP 503", retryAfter: 1, now: 100, random: 0)
            == .retry(at: 140))
        // A longer one is waited out.
        #expect(schedule.decide(row: row(attempts: 3), retryFor: 86_400, reason: "HTTP 503", retryAfter: 41, now: 100, random: 0)
            == .retry(at: 141))
    }

    @Test func durationsReadShort() {
        #expect(RetrySchedule.duration(0) == "0s")
        #expect(RetrySchedule.duration(86_400 + 3_723) == "1d 1h 2m 3s")
    }
}
