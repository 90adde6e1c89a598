/// A hash of text that is the same in every process and on every platform (FNV-1a,
/// 64 bits), for identifiers derived from names that must not change between runs:
/// Swift's `Hasher` is seeded per process, so it cannot serve.
package enum StableHash {
    /// The FNV-1a hash of the UTF-8 bytes of `text`.
    package static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        // The string's own UTF-8, not `text.utf8`'s iterator: this runs for every message
        // routed (its device's lane).
        var text = text
        text.withUTF8 { bytes in
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        }
        return hash
    }

    /// The low 32 bits of `fnv1a(text)` as eight lowercase hexadecimal digits.
    package static func shortHex(_ text: String) -> String {
        let digits = String(fnv1a(text) & 0xFFFF_FFFF, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
