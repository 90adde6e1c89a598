import Foundation

/// How long evaluations took, kept in fixed log-scale buckets so that recording is
/// constant time and memory however many are recorded, and percentiles are exact to
/// within one bucket (a factor of 2^(1/4), about 19 %).
///
/// Bucket 0 holds durations up to 1 µs; bucket `i` those up to 1 µs × 2^(i/4); the last
/// one everything longer (beyond about 190 s). A value type: each lane keeps its
/// own and the statistics reporter merges them, so recording needs no lock.
package struct LatencyHistogram: Sendable, Equatable {
    /// The number of buckets.
    package static let bucketCount = 112
    /// The upper bound of bucket 0, in seconds.
    static let smallest = 1e-6

    /// How many durations fell in each bucket.
    package private(set) var buckets: [Int]
    /// How many durations were recorded.
    package private(set) var count: Int
    /// The longest duration recorded, in seconds (0 when none was).
    package private(set) var maximum: Double
    /// The sum of the durations recorded, in seconds.
    package private(set) var sum: Double = 0

    /// An empty histogram.
    package init() {
        buckets = Array(repeating: 0, count: LatencyHistogram.bucketCount)
        count = 0
        maximum = 0
    }

    /// Records one duration in seconds. A negative one counts as 0; NaN and infinity,
    /// which no clock measures, are ignored.
    package mutating func record(_ seconds: Double) {
        guard seconds.isFinite else { return }
        let value = max(0, seconds)
        buckets[LatencyHistogram.bucket(of: value)] += 1
        count += 1
        sum += value
        maximum = max(maximum, value)
    }

    /// Adds everything `other` recorded.
    package mutating func merge(_ other: LatencyHistogram) {
        for index in buckets.indices { buckets[index] += other.buckets[index] }
        count += other.count
        sum += other.sum
        maximum = max(maximum, other.maximum)
    }

    /// The duration, in seconds, that a fraction `quantile` (0...1) of the recorded ones
    /// do not exceed: the upper bound of the bucket holding that rank, capped at the
    /// maximum. Nil when nothing was recorded.
    package func percentile(_ quantile: Double) -> Double? {
        guard count > 0 else { return nil }
        let rank = max(1, Int((min(max(quantile, 0), 1) * Double(count)).rounded(.up)))
        var seen = 0
        for (index, inBucket) in buckets.enumerated() {
            seen += inBucket
            if seen >= rank { return min(LatencyHistogram.upperBound(of: index), maximum) }
        }
        return maximum
    }

    /// The count, median, 90th and 99th percentiles and maximum; nil when empty.
    package var summary: Summary? {
        guard let p50 = percentile(0.5), let p90 = percentile(0.9), let p99 = percentile(0.99) else { return nil }
        return Summary(count: count, p50: p50, p90: p90, p99: p99, maximum: maximum)
    }

    /// The upper bound of bucket `index` in seconds (infinity for the last).
    static func upperBound(of index: Int) -> Double {
        index >= bucketCount - 1 ? .infinity : smallest * pow(2, Double(index) / 4)
    }

    /// The bucket a duration of `seconds` (not negative) falls in.
    static func bucket(of seconds: Double) -> Int {
        guard seconds > smallest else { return 0 }
        let exact = 4 * log2(seconds / smallest)
        guard exact < Double(bucketCount - 1) else { return bucketCount - 1 }
        var index = Int(exact.rounded(.up))
        // Rounding in log2 may land one bucket off near a bound: settle it exactly.
        while index > 0 && seconds <= upperBound(of: index - 1) { index -= 1 }
        while index < bucketCount - 1 && seconds > upperBound(of: index) { index += 1 }
        return index
    }

    /// A histogram reduced to the numbers a report shows, in seconds.
    package struct Summary: Sendable, Equatable {
        /// How many durations were recorded.
        package var count: Int
        /// The median.
        package var p50: Double
        /// The 90th percentile.
        package var p90: Double
        /// The 99th percentile.
        package var p99: Double
        /// The longest duration.
        package var maximum: Double

        package init(count: Int, p50: Double, p90: Double, p99: Double, maximum: Double) {
            self.count = count
            self.p50 = p50
            self.p90 = p90
            self.p99 = p99
            self.maximum = maximum
        }
    }
}
