/// The text JSON output gives a number: integral numbers (below 10^15) without a
/// fraction ("3", not "3.0"), other finite numbers in the shortest form that reads back
/// to the same Double, as Swift's `description` writes it; non-finite ones, which JSON
/// cannot hold, as null.
///
/// Why not `description` alone: every outbound message writes a few numbers (a
/// position's coordinates, accuracy and time), and `description`, with the `String` it
/// makes, took 70-120 ns a number where the digits written straight into the output take
/// 35-60. So the numbers most messages hold take a shorter way, and give the same text:
///
/// - an integral number's digits;
/// - a number of at most nine decimals, found as the fewest decimals `k` for which
///   `m = (|x| × 10^k).rounded()` gives back `x` as `m / 10^k`, as long as `m < 2^50`.
///   Then the decimal `m / 10^k` reads back to `x` (both `m` and `10^k` are exact, so the
///   division is the correctly rounded value of the decimal), and it is the shortest
///   decimal that does: one with fewer decimals that read back to `x` would lie within
///   half a unit in the last place of `x`, so close to `x × 10^k'` that the rounding above
///   finds it (the product's error is below 2^-3 while `m < 2^50`); and two decimals with
///   `k` digits cannot both read back to `x`, since `10^-k > x / 2^50` exceeds the unit in
///   the last place of `x`. Swift's `description` writes that decimal in plain notation
///   for every number from 10^-3 on, so the fast path stays above it.
///
/// Anything else (very small or large numbers, more decimals) is written by
/// `description`. `JSONNumberTextTests` compares both ways on millions of numbers.
enum JSONNumberText {
    /// Appends the text of `number` to `out`.
    static func append(_ number: Double, to out: inout [UInt8]) {
        guard number.isFinite else {
            out.append(contentsOf: "null".utf8)
            return
        }
        let magnitude = number.magnitude
        if magnitude < 1e15, let integer = Int64(exactly: number) {
            appendDecimal(integer.magnitude, decimals: 0, negative: integer < 0, to: &out)
            return
        }
        if magnitude >= 1e-3, magnitude < 1e15 {
            var scale = 1.0
            for decimals in 1...maximumDecimals {
                scale *= 10
                let scaled = (magnitude * scale).rounded()
                guard scaled < 0x1p50 else { break }
                if scaled / scale == magnitude {
                    appendDecimal(UInt64(scaled), decimals: decimals, negative: number < 0, to: &out)
                    return
                }
            }
        }
        out.append(contentsOf: number.description.utf8)
    }

    /// The most decimals the fast path tries before leaving the number to `description`.
    static let maximumDecimals = 9

    /// Appends `digits / 10^decimals` in plain notation (a leading "0." when below one),
    /// with a minus sign when `negative`.
    private static func appendDecimal(_ digits: UInt64, decimals: Int, negative: Bool, to out: inout [UInt8]) {
        // At most 20 digits, a point and a sign.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            var index = buffer.count
            var rest = digits
            var written = 0
            repeat {
                if written == decimals && decimals > 0 {
                    index -= 1
                    buffer[index] = UInt8(ascii: ".")
                }
                index -= 1
                buffer[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
                written += 1
            } while rest > 0 || written <= decimals
            if negative {
                index -= 1
                buffer[index] = UInt8(ascii: "-")
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[index...]))
        }
    }
}
