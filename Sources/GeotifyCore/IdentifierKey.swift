/// A fence identifier of at most 15 UTF-8 bytes as two words: its bytes and their count.
/// Two identifiers with equal keys have the same bytes, so they are equal as strings;
/// the evaluator finds the fence a device's state names by comparing two integers per
/// fence near the fix, instead of reading each fence's `String` (from an array of its
/// own, a cache line the fix would otherwise wait for). Identifiers with no key (longer,
/// or byte for byte different but equal as strings) are compared as strings.
struct IdentifierKey: Equatable {
    let low: UInt64
    let high: UInt64

    /// The key of `identifier`, nil when it is longer than 15 bytes.
    @inline(__always)
    init?(_ identifier: String) {
        var low: UInt64 = 0
        var high: UInt64 = 0
        var count: UInt64 = 0
        for byte in identifier.utf8 {
            guard count < 15 else { return nil }
            if count < 8 {
                low |= UInt64(byte) << (8 * count)
            } else {
                high |= UInt64(byte) << (8 * (count - 8))
            }
            count += 1
        }
        self.low = low
        self.high = high | count << 56
    }

    /// The key stored as `words` (see `words`), nil for the words of no key.
    @inline(__always)
    init?(words: (Double, Double)) {
        guard words.1.bitPattern != IdentifierKey.none else { return nil }
        low = words.0.bitPattern
        high = words.1.bitPattern
    }

    /// Two words that store `key` (nil as words no key has).
    static func words(_ key: IdentifierKey?) -> (Double, Double) {
        guard let key else { return (0, Double(bitPattern: none)) }
        return (Double(bitPattern: key.low), Double(bitPattern: key.high))
    }

    /// The high word of no key: a count byte of 255.
    private static let none = UInt64.max
}
