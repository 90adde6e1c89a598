import Foundation

/// One line of the results table: what was measured of Geotify, its baseline measured
/// in the same run, and the target for it.
struct ResultRow: Sendable {
    /// What a number is, which decides how it prints and which direction is better.
    enum Unit: String, Sendable {
        case perSecond = "/s"
        case nanoseconds = "ns"
        case microseconds = "µs"
        case milliseconds = "ms"
        case seconds = "s"
        case bytes = "B"
        case factor = "×"

        var higherIsBetter: Bool { self == .perSecond }
    }

    /// A bound the issue sets on a row.
    enum Target: Sendable {
        /// The value itself must be at least this.
        case atLeast(Double)
        /// The value itself must be at most this.
        case atMost(Double)
        /// Geotify must do at least this well relative to the baseline (1 = as well).
        case baselineRatioAtLeast(Double)
    }

    var scenario: String
    var measure: String
    var value: Double
    var unit: Unit
    var baseline: Double?
    var baselineName: String?
    var target: Target?
    var detail: String = ""

    /// How many times better than the baseline Geotify is (above 1: better).
    var versusBaseline: Double? {
        guard let baseline, baseline > 0, value > 0 else { return nil }
        return unit.higherIsBetter ? value / baseline : baseline / value
    }

    /// Whether the target is met; nil without a target.
    var met: Bool? {
        switch target {
        case .atLeast(let bound)?: value >= bound
        case .atMost(let bound)?: value <= bound
        case .baselineRatioAtLeast(let bound)?: versusBaseline.map { $0 >= bound }
        case nil: nil
        }
    }

    var targetText: String {
        switch target {
        case .atLeast(let bound)?: "≥ \(ResultRow.format(bound, unit))"
        case .atMost(let bound)?: "≤ \(ResultRow.format(bound, unit))"
        case .baselineRatioAtLeast(let bound)?: "≥ \(ResultRow.decimal(bound, 2))× baseline"
        case nil: ""
        }
    }

    /// `value` in `unit`, short and readable: 2.15 M/s, 465 ns, 0.84 ms, 312 B.
    static func format(_ value: Double, _ unit: Unit) -> String {
        switch unit {
        case .perSecond:
            if value >= 1e6 { return "\(decimal(value / 1e6, 2)) M/s" }
            if value >= 1e3 { return "\(decimal(value / 1e3, 1)) k/s" }
            return "\(decimal(value, 1)) /s"
        case .nanoseconds:
            if value >= 1e6 { return "\(decimal(value / 1e6, 2)) ms" }
            if value >= 1e4 { return "\(decimal(value / 1e3, 1)) µs" }
            return "\(decimal(value, 0)) ns"
        case .microseconds: return "\(decimal(value, value < 10 ? 2 : 1)) µs"
        case .milliseconds: return "\(decimal(value, value < 10 ? 2 : 1)) ms"
        case .seconds: return "\(decimal(value, 2)) s"
        case .bytes:
            if value >= 1_048_576 { return "\(decimal(value / 1_048_576, 1)) MiB" }
            return "\(decimal(value, 0)) B"
        case .factor: return "\(decimal(value, 2))×"
        }
    }

    static func decimal(_ value: Double, _ places: Int) -> String {
        String(format: "%.\(places)f", value)
    }

    /// A count with spaces between groups of thousands: 1 000 000.
    static func count(_ value: Int) -> String {
        let digits = String(value)
        var grouped = ""
        for (offset, character) in digits.enumerated() {
            if offset > 0 && (digits.count - offset) % 3 == 0 { grouped.append(" ") }
            grouped.append(character)
        }
        return grouped
    }
}
