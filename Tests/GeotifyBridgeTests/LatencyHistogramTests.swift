import Foundation
import Testing
import GeotifyBridge

@Suite("Latency histogram")
struct LatencyHistogramTests {
    /// Percentiles are bucket upper bounds: within a factor 2^(1/4) above the exact value.
    func isClose(_ reported: Double?, to exact: Double) -> Bool {
        guard let reported else { return false }
        return reported >= exact && reported <= exact * pow(2, 0.25) * (1 + 1e-12)
    }

    @Test func anEmptyHistogramHasNoPercentiles() {
        let histogram = LatencyHistogram()
        #expect(histogram.count == 0)
        #expect(histogram.percentile(0.5) == nil)
        #expect(histogram.summary == nil)
    }

    @Test func percentilesOfAUniformSample() throws {
        var histogram = LatencyHistogram()
        for millisecond in 1...1000 { histogram.record(Double(millisecond) / 1000) }
        let summary = try #require(histogram.summary)
        #expect(summary.count == 1000)
        #expect(isClose(summary.p50, to: 0.5))
        #expect(isClose(summary.p90, to: 0.9))
        #expect(isClose(summary.p99, to: 0.99))
        #expect(summary.maximum == 1)
        #expect(histogram.percentile(1) == 1)
        #expect(isClose(histogram.percentile(0), to: 0.001))
    }

    @Test func aPercentileNeverExceedsTheMaximum() {
        var histogram = LatencyHistogram()
        histogram.record(0.000_123)
        #expect(histogram.percentile(0.5) == 0.000_123)
        #expect(histogram.percentile(0.99) == 0.000_123)
    }

    @Test func extremesAndBadValuesDoNotCrash() {
        var histogram = LatencyHistogram()
        histogram.record(-1)
        histogram.record(0)
        histogram.record(.nan)
        histogram.record(.infinity)
        histogram.record(1e9)
        #expect(histogram.count == 3)
        #expect(histogram.buckets[0] == 2)
        #expect(histogram.buckets[LatencyHistogram.bucketCount - 1] == 1)
        #expect(histogram.maximum == 1e9)
        #expect(histogram.percentile(1) == 1e9)
        #expect((histogram.percentile(0.5) ?? 1) <= 1e-6)
    }

    @Test func mergingIsAddingUp() {
        var a = LatencyHistogram()
        var b = LatencyHistogram()
        var both = LatencyHistogram()
        for (index, value) in [0.001, 0.002, 0.5, 0.000_01, 3].enumerated() {
            if index % 2 == 0 { a.record(value) } else { b.record(value) }
            both.record(value)
        }
        a.merge(b)
        #expect(a == both)
    }

    /// The sum (`/metrics`' `_sum`) adds the durations recorded, a negative one as 0.
    @Test func theSumAddsTheDurationsANegativeOneAsZero() {
        var histogram = LatencyHistogram()
        histogram.record(0.25)
        histogram.record(-1)
        histogram.record(0.5)
        #expect(histogram.count == 3)
        #expect(histogram.sum == 0.75)
    }

    /// A percentile's rank is rounded up and is the first bucket reaching it: the median
    /// of three durations, one a bucket, is the second.
    @Test func theMedianOfThreeIsTheSecond() {
        var histogram = LatencyHistogram()
        for seconds in [0.001, 0.01, 0.1] { histogram.record(seconds) }
        #expect(isClose(histogram.percentile(0.5), to: 0.01))
        #expect(isClose(histogram.percentile(1.0 / 3), to: 0.001))
    }
}
