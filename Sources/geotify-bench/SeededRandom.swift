import Foundation

/// A small, fast deterministic generator (SplitMix64): every run of the bench builds
/// the same workload from its seed, so runs on different days compare.
struct SeededRandom: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform value in 0..<1.
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// A uniform value in `range`.
    mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        range.lowerBound + unit() * (range.upperBound - range.lowerBound)
    }

    /// A value whose logarithm is uniform in log(`low`)...log(`high`): as many fences of
    /// 50–500 m as of 500 m–5 km, which is how home, shop and district fences spread.
    mutating func logUniform(_ low: Double, _ high: Double) -> Double {
        low * pow(high / low, unit())
    }

    /// A standard normal value (Box–Muller).
    mutating func normal() -> Double {
        let u = max(unit(), 0x1p-60)
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * unit())
    }

    /// A uniform integer in 0..<`count`.
    mutating func below(_ count: Int) -> Int {
        Int(next() % UInt64(count))
    }

    /// A generator for a sub-workload, independent of how much this one is used later.
    mutating func split() -> SeededRandom {
        SeededRandom(seed: next())
    }
}
