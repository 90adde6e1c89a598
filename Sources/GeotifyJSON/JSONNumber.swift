/// The reading of a JSON number, shared by the parser (`JSONParser`) and the scan of flat
/// objects (`FlatObjectScan`), so that both read every number to the same `Double`:
/// strict JSON grammar, exact for up to 15 significant digits with small exponents (the
/// common case of coordinates), the C library otherwise.
enum JSONNumber {
    /// What `scan` found.
    enum Scanned {
        case value(Double)
        /// Not a number by the grammar: why, with the index left where the scan stopped.
        case malformed(StaticString)
        /// A number by the grammar that a `Double` cannot hold (infinite); the index is
        /// past it.
        case outOfRange
    }

    /// Reads the number that starts at `index` (a '-' or a digit) and moves `index` past it.
    @inline(__always)
    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Scanned {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var exponent = 0
        guard index < bytes.count, isDigit(bytes[index]) else { return .malformed("a number needs a digit after '-'") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count && isDigit(bytes[index]) { return .malformed("a number must not start with a leading zero") }
        } else {
            while index < bytes.count && isDigit(bytes[index]) {
                if digits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(bytes[index] - UInt8(ascii: "0"))
                    digits += 1
                } else {
                    exponent += 1
                }
                index += 1
            }
        }
        if index < bytes.count && bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { return .malformed("a number needs a digit after '.'") }
            while index < bytes.count && isDigit(bytes[index]) {
                if digits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(bytes[index] - UInt8(ascii: "0"))
                    if mantissa != 0 { digits += 1 }
                    exponent -= 1
                }
                index += 1
            }
        }
        if index < bytes.count && (bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E")) {
            index += 1
            var exponentNegative = false
            if index < bytes.count && (bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")) {
                exponentNegative = bytes[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { return .malformed("a number needs a digit in its exponent") }
            var written = 0
            while index < bytes.count && isDigit(bytes[index]) {
                if written < 100_000 { written = written * 10 + Int(bytes[index] - UInt8(ascii: "0")) }
                index += 1
            }
            exponent += exponentNegative ? -written : written
        }
        if digits <= 15 && exponent >= -22 && exponent <= 22 {
            var value = Double(mantissa)
            if exponent < 0 { value /= powersOfTen[-exponent] } else { value *= powersOfTen[exponent] }
            return .value(negative ? -value : value)
        }
        guard let value = Double(text(bytes, start..<index)), value.isFinite else { return .outOfRange }
        return .value(value)
    }

    /// The bytes of `range` as text (a number's, for the C library and error messages).
    static func text(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }

    @inline(__always) static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// Exact powers of ten that a Double can hold, for the fast path.
    private static let powersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]
}
