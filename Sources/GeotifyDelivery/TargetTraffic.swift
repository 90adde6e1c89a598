/// What the worker knows of one target between plans: the attempts under way, when
/// attempts started lately (for the rate limit), and whether the target is resting after
/// failures or a `Retry-After`. A value: the planner takes it and hands back the next.
///
/// A failure that says the target is down or overloaded (`AttemptOutcome.failed`) pauses
/// the whole target, for the back-off of its failures in a row, or for the `Retry-After`
/// when that is longer (never shorter: `RetrySchedule.wait`) up to the end of the failing
/// delivery's retry window; so a dead or hostile target gets a trickle of probes, not one
/// attempt per waiting device. The pause holds each delivery no later than the end of its
/// own window (`earliestStart`), so the last attempt `RetrySchedule` moves there is made
/// there, whichever delivery's failure or `Retry-After` the target rests for. Any answer
/// that shows the target up (delivered, or refused for good) ends the streak and the
/// back-off part of the rest; a rest the service asked for with `Retry-After` is kept to
/// its end, since an answer to an attempt already under way says nothing of its limit.
package struct TargetTraffic: Sendable, Equatable {
    /// Row ids of the attempts under way.
    package var underWay: Set<Int64> = []
    /// No attempt starts before this wall-clock time.
    package var pausedUntil: Double = 0
    /// The part of `pausedUntil` a service asked for with `Retry-After` (capped at the end
    /// of the failing delivery's window), which an answer showing the target up keeps.
    package var askedUntil: Double = 0
    /// Failures in a row.
    package var failures = 0
    /// Start times of recent attempts, oldest first, for the rate limit.
    package var starts: [Double] = []

    package init() {}

    /// The earliest time a new attempt at a delivery whose retry window ends at `windowEnd`
    /// may start under the pause, which holds it no later than that, and the rate limit
    /// (concurrency aside), with start times older than the rate window dropped.
    package mutating func earliestStart(now: Double, rate: RateLimit?, windowEnd: Double) -> Double {
        let paused = min(pausedUntil, windowEnd)
        guard let rate, rate.requests > 0 else {
            starts.removeAll()
            return paused
        }
        starts.removeAll { $0 <= now - rate.seconds }
        let free = starts.count < rate.requests ? now : starts[starts.count - rate.requests] + rate.seconds
        return max(paused, free)
    }

    /// Records that attempt `id` started at `now`.
    package mutating func started(_ id: Int64, at now: Double) {
        underWay.insert(id)
        starts.append(now)
    }

    /// Records how attempt `id` ended at `now`; `windowEnd` is the end of the attempted
    /// delivery's retry window.
    package mutating func finished(
        _ id: Int64, _ outcome: AttemptOutcome, at now: Double, schedule: RetrySchedule, random: Double, windowEnd: Double = .infinity
    ) {
        underWay.remove(id)
        switch outcome {
        case .delivered, .rejected:
            failures = 0
            pausedUntil = askedUntil
        case .failed(_, let retryAfter):
            failures += 1
            let backOff = now + schedule.delay(afterFailures: failures, random: random)
            if let retryAfter {
                askedUntil = max(askedUntil, min(now + retryAfter, windowEnd))
            }
            let asked = now + schedule.wait(afterFailures: failures, retryAfter: retryAfter, random: random)
            pausedUntil = max(pausedUntil, backOff, min(asked, windowEnd))
        }
    }
}
