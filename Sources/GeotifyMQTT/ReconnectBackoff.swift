/// How long to wait before each connection attempt: capped exponential backoff with
/// jitter. It exists so a client that cannot connect (broker down, refused credentials,
/// TLS failing) retries ever more slowly instead of in a tight loop, and so many clients
/// cut off together (a broker restart) do not all come back in the same instant.
///
/// After `failures` attempts that ended without a lasting connection, the ceiling is
/// `minimum · 2^failures` seconds, at most `maximum`; the delay is that ceiling less a
/// random share of up to `jitter` of it, so it lies in `[ceiling · (1 − jitter), ceiling]`.
/// A connection the broker accepted and that then lasted at least `maximum` seconds
/// starts the count again; a shorter one (a client kicked out as soon as it connects,
/// say by a twin with the same client id) counts as a failure, so even that cannot loop
/// faster than the backoff allows.
///
/// A pure value: the randomness and the length of the connection are passed in, so
/// tests can check the bounds without a clock.
struct ReconnectBackoff: Sendable, Equatable {
    /// The first delay's ceiling, in seconds.
    let minimum: Double
    /// The largest ceiling, in seconds; also how long a connection must last to reset.
    let maximum: Double
    /// The largest share of a ceiling taken off at random, 0 (none) to 1.
    let jitter: Double
    /// Attempts in a row that ended without a lasting connection.
    private(set) var failures = 0

    /// A backoff from `minimum` to `maximum` seconds (`minimum` at least a millisecond,
    /// `maximum` not below it) with `jitter` clamped to 0...1.
    init(minimum: Double, maximum: Double, jitter: Double = 0.5) {
        self.minimum = max(minimum, 0.001)
        self.maximum = max(maximum, self.minimum)
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The ceiling of the delay after `failures` failed attempts in a row.
    func ceiling(afterFailures failures: Int) -> Double {
        // 2^62 overflows nothing and is far beyond any sensible maximum.
        let doubling = Double(UInt64(1) << UInt64(min(max(failures, 0), 62)))
        return min(minimum * doubling, maximum)
    }

    /// The delay, in seconds, before the attempt that follows one that has just ended,
    /// and counts that attempt. `connectedFor` is how long the broker had accepted the
    /// connection, in seconds, or nil if it never did. `random` supplies the jitter.
    mutating func delay<Random: RandomNumberGenerator>(
        afterConnectionOf connectedFor: Double?, using random: inout Random
    ) -> Double {
        if let connectedFor, connectedFor >= maximum {
            failures = 0
        }
        let ceiling = ceiling(afterFailures: failures)
        failures = min(failures + 1, 62)
        let share = jitter > 0 ? Double.random(in: 0..<jitter, using: &random) : 0
        return ceiling * (1 - share)
    }
}
