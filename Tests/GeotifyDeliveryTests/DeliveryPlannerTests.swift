import GeotifyDelivery
import GeotifyStore
import Testing

@Suite("Delivery planner")
struct DeliveryPlannerTests {
    func row(_ id: Int64, target: String = "t", device: String = "d", queued: Double = 0, due: Double = 0) -> DeliveryRow {
        var entry = Samples.entry(target: target)
        entry.device = device
        entry.eventID = "e\(id)"
        return DeliveryRow(id: id, entry: entry, queued: queued, due: due, attempts: 0, lastError: nil)
    }

    @Test func dueRowsStartAndTheEarliestWaitingOneSetsTheWake() {
        let plan = DeliveryPlanner.plan(
            heads: [row(1, device: "a"), row(2, device: "b", due: 30), row(3, device: "c", due: 20)],
            limits: ["t": TargetLimits(concurrency: 5)], traffic: [:], now: 10)
        #expect(plan.start.map(\.id) == [1])
        #expect(plan.wake == 20)
        #expect(plan.traffic["t"]?.underWay == [1])
    }

    @Test func concurrencyCapsAttemptsUnderWayPerTarget() {
        let heads = (1...5).map { row(Int64($0), device: "d\($0)") } + [row(6, target: "other")]
        let plan = DeliveryPlanner.plan(heads: heads, limits: ["t": TargetLimits(concurrency: 2), "other": TargetLimits()], traffic: [:], now: 0)
        #expect(plan.start.map(\.id) == [1, 2, 6])
        #expect(plan.wake == nil)
        let next = DeliveryPlanner.plan(heads: heads, limits: ["t": TargetLimits(concurrency: 2), "other": TargetLimits()], traffic: plan.traffic, now: 0)
        #expect(next.start.isEmpty)
    }

    @Test func theRateLimitSpacesStartsOverItsWindow() {
        let limits = ["t": TargetLimits(concurrency: 10, rate: RateLimit(requests: 2, seconds: 60))]
        let heads = (1...4).map { row(Int64($0), device: "d\($0)") }
        let first = DeliveryPlanner.plan(heads: heads, limits: limits, traffic: [:], now: 100)
        #expect(first.start.map(\.id) == [1, 2])
        #expect(first.wake == 160)
        var traffic = first.traffic
        traffic["t"]?.finished(1, .delivered(answer: "ok"), at: 101, schedule: RetrySchedule(), random: 0)
        traffic["t"]?.finished(2, .delivered(answer: "ok"), at: 101, schedule: RetrySchedule(), random: 0)
        let early = DeliveryPlanner.plan(heads: Array(heads.dropFirst(2)), limits: limits, traffic: traffic, now: 159)
        #expect(early.start.isEmpty)
        #expect(early.wake == 160)
        let later = DeliveryPlanner.plan(heads: Array(heads.dropFirst(2)), limits: limits, traffic: traffic, now: 160)
        #expect(later.start.map(\.id) == [3, 4])
    }

    @Test func aFailureOrRetryAfterPausesTheWholeTargetAndSuccessEndsTheStreak() {
        var traffic = TargetTraffic()
        traffic.started(1, at: 0)
        traffic.finished(1, .failed(reason: "HTTP 429", retryAfter: 120), at: 10, schedule: RetrySchedule(), random: 0)
        #expect(traffic.pausedUntil == 130)
        let plan = DeliveryPlanner.plan(heads: [row(2, device: "other")], limits: ["t": TargetLimits()], traffic: ["t": traffic], now: 20)
        #expect(plan.start.isEmpty)
        #expect(plan.wake == 130)
        traffic.finished(3, .failed(reason: "down", retryAfter: nil), at: 130, schedule: RetrySchedule(first: 10, maximum: 900), random: 0.999_999)
        #expect(traffic.failures == 2)
        #expect(traffic.pausedUntil.rounded() == 150)
        traffic.finished(4, .rejected(reason: "HTTP 400"), at: 150, schedule: RetrySchedule(), random: 0)
        #expect(traffic.failures == 0)
    }

    @Test func anAnswerShowingTheTargetUpEndsTheBackOffButNotARetryAfter() {
        let waiting = [row(3, device: "carol", due: 0)]
        func plan(_ traffic: TargetTraffic, at now: Double) -> DeliveryPlanner.Plan {
            DeliveryPlanner.plan(heads: waiting, limits: ["t": TargetLimits(concurrency: 5)], traffic: ["t": traffic], now: now)
        }
        // Two attempts under way; one fails at 10 and the target rests for its back-off
        // (10 s); the other is delivered at 12: the target is up, so the rest ends.
        var traffic = TargetTraffic()
        traffic.started(1, at: 0)
        traffic.started(2, at: 0)
        traffic.finished(1, .failed(reason: "HTTP 503", retryAfter: nil), at: 10, schedule: RetrySchedule(first: 10, maximum: 900), random: 0.999_999)
        #expect(plan(traffic, at: 11).start.isEmpty)
        var delivered = traffic
        delivered.finished(2, .delivered(answer: "ok"), at: 12, schedule: RetrySchedule(), random: 0)
        #expect(plan(delivered, at: 12).start.map(\.id) == [3])
        var rejected = traffic
        rejected.finished(2, .rejected(reason: "HTTP 400"), at: 12, schedule: RetrySchedule(), random: 0)
        #expect(plan(rejected, at: 12).start.map(\.id) == [3])
        // A rest the service asked for with `Retry-After: 120` is kept to its end: an
        // answer to an attempt already under way says nothing of the service's limit.
        var asked = TargetTraffic()
        asked.started(1, at: 0)
        asked.started(2, at: 0)
        asked.finished(1, .failed(reason: "HTTP 429", retryAfter: 120), at: 10, schedule: RetrySchedule(first: 10, maximum: 900), random: 0.999_999)
        asked.finished(2, .delivered(answer: "ok"), at: 12, schedule: RetrySchedule(), random: 0)
        #expect(plan(asked, at: 12).start.isEmpty)
        #expect(plan(asked, at: 12).wake == 130)
        #expect(plan(asked, at: 130).start.map(\.id) == [3])
    }

    @Test func aPauseHoldsEachDeliveryNoLaterThanTheEndOfItsOwnWindow() {
        // Delivery 1, queued at 100 with a window of an hour, failed at 3200 with
        // `Retry-After: 600`: the target rests until its window's end, 3700.
        var traffic = TargetTraffic()
        traffic.started(1, at: 3200)
        traffic.finished(1, .failed(reason: "HTTP 429", retryAfter: 600), at: 3200, schedule: RetrySchedule(), random: 0, windowEnd: 3700)
        #expect(traffic.pausedUntil == 3700)
        // Delivery 2, queued at 0, is due again at 3300: the rest holds it, but only to the
        // end of its window, 3600, where its last attempt is made. Delivery 3, queued at
        // 2000, waits out the whole rest.
        let heads = [row(2, device: "a", queued: 0, due: 3300), row(3, device: "b", queued: 2000, due: 3300)]
        func plan(at now: Double) -> DeliveryPlanner.Plan {
            DeliveryPlanner.plan(heads: heads, limits: ["t": TargetLimits(concurrency: 5)], retryFor: ["t": 3600], traffic: ["t": traffic], now: now)
        }
        #expect(plan(at: 3300).start.isEmpty)
        #expect(plan(at: 3300).wake == 3600)
        #expect(plan(at: 3600).start.map(\.id) == [2])
        #expect(plan(at: 3600).wake == 3700)
        #expect(plan(at: 3700).start.map(\.id) == [2, 3])
    }

    @Test func aRetryAfterIsKeptOnlyToTheEndOfTheFailingDeliverysWindow() {
        // A day asked for by the answer to a delivery whose window ends at 3700: the rest
        // the target keeps after an answer showing it up ends there too, so a delivery
        // queued later, with a window of its own, is not held for the day.
        var traffic = TargetTraffic()
        traffic.started(1, at: 100)
        traffic.started(2, at: 100)
        traffic.finished(1, .failed(reason: "HTTP 429", retryAfter: 86_400), at: 100, schedule: RetrySchedule(), random: 0, windowEnd: 3700)
        traffic.finished(2, .delivered(answer: "ok"), at: 200, schedule: RetrySchedule(), random: 0)
        #expect(traffic.pausedUntil == 3700)
        #expect(traffic.earliestStart(now: 200, rate: nil, windowEnd: 90_000) == 3700)
    }

    @Test func aFailureWithoutRetryAfterDoesNotShortenARestTheServiceAskedFor() {
        // A 429 asking for 600 s, then the answer to an attempt already under way, a 503
        // without `Retry-After` whose own back-off is 10 s: the target rests the 600 s.
        var traffic = TargetTraffic()
        traffic.started(1, at: 0)
        traffic.started(2, at: 0)
        traffic.finished(1, .failed(reason: "HTTP 429", retryAfter: 600), at: 0, schedule: RetrySchedule(), random: 0)
        traffic.finished(2, .failed(reason: "HTTP 503", retryAfter: nil), at: 10, schedule: RetrySchedule(), random: 0)
        #expect(traffic.pausedUntil == 600)
        #expect(traffic.failures == 2)
    }

    @Test func aTargetAnsweringRetryAfterZeroGetsTheBackOffsTrickleNotALoop() {
        // One delivery to a target that answers every attempt with 503 and `Retry-After: 0`,
        // planned, failed and rescheduled as the worker does, for an hour of the clock.
        let schedule = RetrySchedule()
        var traffic: [String: TargetTraffic] = [:]
        var head = row(1)
        var now = 0.0
        var attempts = 0
        while now < 3600, attempts < 1000 {
            let plan = DeliveryPlanner.plan(heads: [head], limits: ["t": TargetLimits()], traffic: traffic, now: now)
            traffic = plan.traffic
            guard plan.start.map(\.id) == [1] else {
                guard let wake = plan.wake, wake > now else { break }
                now = wake
                continue
            }
            attempts += 1
            let failure = AttemptOutcome.failed(reason: "HTTP 503", retryAfter: 0)
            traffic["t"]?.finished(1, failure, at: now, schedule: schedule, random: 0.5)
            guard case .retry(let next) = schedule.decide(row: head, retryFor: 86_400, reason: "HTTP 503", retryAfter: 0, now: now, random: 0.5) else { break }
            head.due = next
            head.attempts += 1
        }
        // Waits of 7.5 s, 15 s, 30 s, ... 480 s, then 675 s: 11 attempts in the hour.
        #expect(attempts == 11)
        #expect(traffic["t"]?.pausedUntil == head.due)
    }

    @Test func rowsOfTargetsNoLongerConfiguredAreSetAside() {
        let plan = DeliveryPlanner.plan(heads: [row(1, target: "gone"), row(2)], limits: ["t": TargetLimits()], traffic: [:], now: 0)
        #expect(plan.unknown.map(\.id) == [1])
        #expect(plan.start.map(\.id) == [2])
    }
}
