/// What `/metrics` shows: the counters of `geotify/stats` (names as `Counters` keeps
/// them, `group.key` for counts by kind), a few gauges and the evaluation latency.
package struct ConsoleMetrics: Sendable, Equatable {
    /// Evaluation latency as a cumulative histogram since start.
    package struct Latency: Sendable, Equatable {
        /// Each bucket's upper bound in seconds, ascending and finite (the `+Inf`
        /// bucket is `count`).
        package var upperBounds: [Double]
        /// How many durations fell in each bucket (not cumulative), one per bound.
        package var counts: [Int]
        /// How many durations in all (beyond the last bound too).
        package var count: Int
        /// Their sum in seconds.
        package var sum: Double

        package init(upperBounds: [Double], counts: [Int], count: Int, sum: Double) {
            self.upperBounds = upperBounds
            self.counts = counts
            self.count = count
            self.sum = sum
        }
    }

    /// Counter values by name: `messages_received`, `errors.invalid_json`, ...
    package var counters: [String: Int]
    /// Devices with state.
    package var devices: Int
    /// Fences in force (own and shared).
    package var fences: Int
    /// Seconds since the bridge started.
    package var uptime: Double
    /// Messages decided and not yet acknowledged by the broker.
    package var pending: Int
    package var latency: Latency?

    package init(counters: [String: Int], devices: Int, fences: Int, uptime: Double, pending: Int = 0, latency: Latency? = nil) {
        self.counters = counters
        self.devices = devices
        self.fences = fences
        self.uptime = uptime
        self.pending = pending
        self.latency = latency
    }
}
