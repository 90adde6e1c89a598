/// How fast something ran: items done in how many seconds.
struct Throughput: Sendable {
    var items: Int
    var seconds: Double

    var perSecond: Double { seconds > 0 ? Double(items) / seconds : 0 }
    var nanosecondsPerItem: Double { items > 0 ? seconds * 1e9 / Double(items) : 0 }

    /// Runs `chunk(first, count)` on consecutive runs of items until `budget` seconds
    /// have passed or `limit` items are done (at least `minimum` items), and times it.
    /// A first short chunk warms caches and is not counted; `warmedUp` is called after it,
    /// just before timing starts. `clock` reads the time (the monotonic clock, or the
    /// thread's CPU time for the cost of single-threaded work).
    static func measure(
        seconds budget: Double, chunk size: Int, minimum: Int = 1, limit: Int = .max, warmUp: Bool = true,
        clock: () -> Double = BenchClock.now, warmedUp: () -> Void = {}, _ chunk: (_ first: Int, _ count: Int) -> Void
    ) -> Throughput {
        var next = 0
        if warmUp {
            chunk(0, min(size, limit))
            next = min(size, limit)
        }
        warmedUp()
        let start = clock()
        var done = 0
        var elapsed = 0.0
        while done < limit && (elapsed < budget || done < minimum) {
            let count = min(size, limit - done)
            chunk(next, count)
            next += count
            done += count
            elapsed = clock() - start
        }
        return Throughput(items: done, seconds: elapsed)
    }
}

extension [Throughput] {
    /// Lanes timed each on its own clock, as one: every lane's items over the longest
    /// lane's time, as if each had had a core of its own.
    var combined: Throughput {
        Throughput(items: reduce(0) { $0 + $1.items }, seconds: map(\.seconds).max() ?? 0)
    }
}
