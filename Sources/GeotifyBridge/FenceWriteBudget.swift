/// How long each device's fence changes may still keep the bridge writing the fence
/// file: a token bucket of seconds for each device, holding at most `perMinute` seconds
/// and refilled by `perMinute` seconds a minute. A change may start while the device has
/// time left; what the write took is then charged to it, so the balance may end below
/// zero, and the next change waits until it is above again.
///
/// Why: every change (`add`, `edit`, a confirmed `delete`, a `commit`) rewrites the fence
/// file (the whole file in the single-file layout) while the lane, and with it the network
/// thread, waits; and one device's changes are written one at a time (`LaneCore.parts`).
/// So a client allowed to change one device's fences (an operator's script, a console
/// user, a tracker whose broker lets it command itself) could hold every other device's
/// positions for as long as it kept sending changes: against a fence file of 100 000
/// fences (19 MB), 200 changes of one device held them for 38 s; with the budget, for
/// 4.5 s (10 written, 190 refused; `scripts/attack --only 8c`). A budget of time rather
/// than of changes follows what the others wait for: a change of a small file takes a
/// few milliseconds, and a device may make hundreds a minute; one of that large file
/// takes about 0.05 s, and a device may make about 40 at once and one every 1.5 s after
/// (in a fence directory a change writes one device's file: milliseconds again).
/// Past its budget a change is refused as `rate_limited`, saying when the next one may
/// come; other devices have budgets of their own.
///
/// A pure value: the time comes in with each change (the burst's arrival) and each write's
/// duration with its outcome, both measured by the shell. A device whose budget is full
/// again is the same as one never seen, so it is forgotten: the value holds only devices
/// whose fences were written within about the last minute.
package struct FenceWriteBudget: Sendable, Equatable {
    /// What one device has left: `seconds` at `time`, before refilling since.
    private struct Bucket: Sendable, Equatable {
        var seconds: Double
        var time: Double
    }

    /// The most seconds of writing a device may have at once, and in any minute after.
    package let perMinute: Double
    private var buckets: [String: Bucket] = [:]
    /// Past this many devices, those whose budget is full again are forgotten (the bound
    /// doubles with what stays, so forgetting costs a constant time a write).
    private var sweepAbove = 64

    /// A budget of `perMinute` seconds of writing a minute for each device (at least a
    /// millisecond, as the settings allow).
    package init(perMinute: Double) {
        self.perMinute = max(Self.leastCharge, perMinute)
    }

    /// How many devices it holds a budget for (those whose fences were written lately).
    package var count: Int { buckets.count }

    /// Nil when `device` may start a change at `now` (seconds), else the seconds until it
    /// may (never 0: with nothing left, the next moment refills a little).
    package func wait(for device: String, now: Double) -> Double? {
        let left = refilled(buckets[device], now: now).seconds
        return left > 0 ? nil : max(-left / refillPerSecond, Self.leastCharge)
    }

    /// The least a write is charged: what a write and sync of a small file take, so that a
    /// clock too coarse to see a write (or one that stands still, as a test's does) still
    /// counts it.
    package static let leastCharge = 0.001

    /// Charges `device` with `seconds` of writing (at least `leastCharge`) done at `now`.
    package mutating func charge(_ seconds: Double, to device: String, now: Double) {
        var bucket = refilled(buckets[device], now: now)
        bucket.seconds -= max(Self.leastCharge, seconds)
        buckets[device] = bucket
        if buckets.count > sweepAbove {
            buckets = buckets.filter { refilled($0.value, now: now).seconds < perMinute }
            sweepAbove = max(64, 2 * buckets.count)
        }
    }

    private var refillPerSecond: Double { perMinute / 60 }

    /// `bucket` at `now`, refilled since its time (a full one when there is none). A clock
    /// that went back refills nothing.
    private func refilled(_ bucket: Bucket?, now: Double) -> Bucket {
        guard let bucket else { return Bucket(seconds: perMinute, time: now) }
        let elapsed = max(0, now - bucket.time)
        return Bucket(seconds: min(perMinute, bucket.seconds + elapsed * refillPerSecond), time: max(now, bucket.time))
    }
}
