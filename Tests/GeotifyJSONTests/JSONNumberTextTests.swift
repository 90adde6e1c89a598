import Foundation
import GeotifyJSON
import GeotifyTestSupport
import Testing

/// The numbers JSON output writes (`JSONWriter.appendNumber`, `JSONNumberText`) are the
/// text they were before the shorter way: an integral number's digits, else Swift's
/// `description`, the shortest text that reads back to the same Double.
struct JSONNumberTextTests {
    /// The text as it was written before `JSONNumberText`.
    private static func reference(_ number: Double) -> String {
        guard number.isFinite else { return "null" }
        if abs(number) < 1e15, Double(Int64(number)) == number { return String(Int64(number)) }
        return number.description
    }

    private static func written(_ number: Double) -> String {
        var out: [UInt8] = []
        JSONWriter.appendNumber(number, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Numbers at the edges of the shorter way: the smallest magnitude it takes (below
    /// it `description` writes an exponent), the largest, the most decimals, halves and
    /// thirds, signs and zeros.
    @Test(arguments: [
        0.0, -0.0, 1, -1, 0.5, -0.5, 0.1, 0.2, 0.3, 1.0 / 3, 2.0 / 3, 0.001, -0.001, 0.0011, 0.000999, 0.0001, 1e-5,
        0.00012345, 999_999_999_999_999.9, 1e15, 1e15 - 0.5, 1e15 + 0.5, 1e16, 123_456_789.125, 52.520008, -13.405,
        48.000433, 1_796_271_316.25, 0.123456789, 0.1234567891, 12.000000001, 4503599627370495.5, .leastNonzeroMagnitude,
        .greatestFiniteMagnitude, .nan, .infinity, -.infinity,
    ])
    func edges(_ number: Double) {
        #expect(Self.written(number) == Self.reference(number))
    }

    /// Random numbers of the shapes outbound messages hold (coordinates with six
    /// decimals, times with milliseconds, small integers) and any Double at all.
    @Test func randomNumbersAsBefore() {
        var generator = SplitMix64(seed: 0x6E75_6D62)
        var mismatches: [String] = []
        var checked = 0
        func check(_ number: Double) {
            checked += 1
            let text = Self.written(number)
            let expected = Self.reference(number)
            if text != expected && mismatches.count < 10 { mismatches.append("\(expected): \(text)") }
        }
        for _ in 0..<50_000 {
            check(Double(bitPattern: generator.next()))
            let decimals = Int(generator.next() % 13)
            let digits = Double(Int64(bitPattern: generator.next()) % 1_000_000_000_000)
            check(digits / pow(10, Double(decimals)))
            check(Double(Int64(generator.next() % 180_000_000)) / 1e6 - 90)
            check(1_700_000_000 + Double(generator.next() % 100_000_000) / 1_000)
            let scale = pow(10, Double(Int(generator.next() % 24)) - 8)
            check((Double(generator.next() >> 11) / 0x1p53 - 0.5) * scale)
            check(Double(generator.next() % 10_000))
        }
        #expect(checked == 300_000)
        #expect(mismatches.isEmpty, "\(mismatches)")
    }
}
