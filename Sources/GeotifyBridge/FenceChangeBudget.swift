/// How many fence changes each device may still make: a token bucket for each device,
/// holding at most `perMinute` changes and refilled by `perMinute` a minute, so a burst of
/// up to `perMinute` changes goes through at once and a steady stream at that rate.
///
/// Why: every change (`add`, `edit`, a confirmed `delete`, a `commit`) rewrites the fence
/// file, the whole file in the single-file layout, while the lane, and with it the network
/// thread, waits. The changes of one device are written one at a time (`LaneCore.parts`),
/// so a client allowed to change one device's fences (an operator's script, a console
/// user, a tracker whose broker lets it command itself) could keep the bridge rewriting a
/// large file while every other device's positions wait: against a fence file of 100 000
/// fences (19 MB), 200 changes of one device held every position for 27 s; with the
/// budget, 60 were written in 9 s and 140 refused. Past its budget a change is refused as
/// `rate_limited`, saying when the next one is allowed; other devices keep budgets of
/// their own.
///
/// A pure value: the time comes in with each change (the burst's arrival). A device whose
/// budget has filled up again is the same as one never seen, so it is forgotten: the
/// value holds only devices that changed their fences within about the last minute.
package struct FenceChangeBudget: Sendable, Equatable {
    /// What one device has left: `changes` at `time`, before refilling since.
    private struct Bucket: Sendable, Equatable {
        var changes: Double
        var time: Double
    }

    /// The most changes a device may make at once, and in any minute after that.
    package let perMinute: Int
    private var buckets: [String: Bucket] = [:]
    /// Past this many devices, those whose budget is full again are forgotten (the bound
    /// doubles with what stays, so forgetting costs a constant time a change).
    private var sweepAbove = 64

    /// A budget of `perMinute` changes a device (at least 1, as the settings allow).
    package init(perMinute: Int) {
        self.perMinute = max(1, perMinute)
    }

    /// How many devices it holds a budget for (those that changed fences lately).
    package var count: Int { buckets.count }

    /// Spends one of `device`'s changes at `now` (seconds); nil when it may make it, else
    /// the seconds until it may (and nothing is spent).
    package mutating func spend(for device: String, now: Double) -> Double? {
        var bucket = refilled(buckets[device], now: now)
        guard bucket.changes >= 1 else { return (1 - bucket.changes) / refillPerSecond }
        bucket.changes -= 1
        buckets[device] = bucket
        if buckets.count > sweepAbove {
            buckets = buckets.filter { refilled($0.value, now: now).changes < Double(perMinute) }
            sweepAbove = max(64, 2 * buckets.count)
        }
        return nil
    }

    private var refillPerSecond: Double { Double(perMinute) / 60 }

    /// `bucket` at `now`, refilled since its time (a full one when there is none). A clock
    /// that went back refills nothing.
    private func refilled(_ bucket: Bucket?, now: Double) -> Bucket {
        guard let bucket else { return Bucket(changes: Double(perMinute), time: now) }
        let elapsed = max(0, now - bucket.time)
        return Bucket(changes: min(Double(perMinute), bucket.changes + elapsed * refillPerSecond), time: max(now, bucket.time))
    }
}
