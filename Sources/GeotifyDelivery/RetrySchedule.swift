import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// When a failed delivery is tried again: capped exponential back-off with jitter, for the
/// target's retry window, then the dead letters. Pure: the clock value and the random
/// number come in as arguments.
///
/// The n-th failure waits between half and all of `first · 2^(n-1)`, at most `maximum`
/// (equal jitter: spread out, so many devices' retries do not arrive together, yet never
/// much sooner than planned). A `Retry-After` from the service may lengthen that wait but
/// never shorten it (`wait`): a server that answers `Retry-After: 0` (or a date in the
/// past) to every attempt cannot tell from one that is down, and gets the same trickle of
/// probes, not a request loop as fast as it answers.
/// The window runs from when the delivery was queued: a retry that would fall after its
/// end, whether by the back-off or by a `Retry-After`, is moved to the end, so the last
/// attempt is made right at it; a failure at or after the end dead-letters the delivery.
package struct RetrySchedule: Sendable, Equatable {
    /// The wait after the first failure (at most; jitter takes up to half off). Pushover
    /// asks for no retries sooner than 5 seconds.
    package var first: Double = 10
    /// The longest back-off.
    package var maximum: Double = 900

    package init(first: Double = 10, maximum: Double = 900) {
        self.first = first
        self.maximum = maximum
    }

    /// What to do with a delivery after a failure.
    package enum Decision: Sendable, Equatable {
        /// Try again at this wall-clock time.
        case retry(at: Double)
        /// Give up, for this reason.
        case deadLetter(reason: String)
    }

    /// The back-off after `failures` failures in a row, for `random` in [0, 1).
    package func delay(afterFailures failures: Int, random: Double) -> Double {
        let exponent = Double(min(max(failures, 1) - 1, 60))
        let full = min(first * Double.pow2(exponent), maximum)
        return full * (0.5 + 0.5 * min(max(random, 0), 1))
    }

    /// The wait after `failures` failures in a row when the service asked for `retryAfter`
    /// seconds (nil: it did not say): the back-off, or the `Retry-After` when that is longer.
    /// The back-off for that many failures is the floor, not the first back-off, so the
    /// probes of a target that keeps failing thin out as documented whatever it answers
    /// (RFC 9110's `Retry-After` is how long a client ought to wait, not a promise that
    /// sooner will do).
    package func wait(afterFailures failures: Int, retryAfter: Double?, random: Double) -> Double {
        max(delay(afterFailures: failures, random: random), retryAfter ?? 0)
    }

    /// The decision after attempt number `row.attempts + 1` of `row` failed at `now` for
    /// `reason`, in a window of `retryFor` seconds; `retryAfter` is the service's wait.
    package func decide(row: DeliveryRow, retryFor: Double, reason: String, retryAfter: Double?, now: Double, random: Double) -> Decision {
        let deadline = row.queued + retryFor
        let attempts = row.attempts + 1
        let tried = "\(Counted(attempts, "attempt")) in \(RetrySchedule.duration(now - row.queued))"
        let next = now + wait(afterFailures: attempts, retryAfter: retryAfter, random: random)
        if next <= deadline { return .retry(at: next) }
        if now < deadline { return .retry(at: deadline) }
        guard let retryAfter, retryAfter > 0 else { return .deadLetter(reason: "\(reason); gave up after \(tried)") }
        return .deadLetter(reason: "\(reason); gave up after \(tried): the target asked to wait \(RetrySchedule.duration(retryAfter)), past the retry window")
    }

    /// Seconds as `1d 2h 3m 4s`, zero units left out, whole seconds.
    package static func duration(_ seconds: Double) -> String {
        var remaining = Int(max(0, min(seconds, 1e12)).rounded())
        var parts: [String] = []
        for (unit, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] where remaining >= size {
            parts.append("\(remaining / size)\(unit)")
            remaining %= size
        }
        return parts.isEmpty ? "0s" : parts.joined(separator: " ")
    }
}

extension Double {
    /// 2 to the power `exponent`.
    fileprivate static func pow2(_ exponent: Double) -> Double {
        Double(sign: .plus, exponent: Int(exponent), significand: 1)
    }
}
