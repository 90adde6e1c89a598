/// The fence file's contents summed up in a few bytes, so a running bridge can tell
/// that the file changed by what it holds, not only by its size and modification time
/// (an editor or a script can rewrite a file in place keeping both), without keeping a
/// copy of it.
///
/// The hash is 64 bits over every byte, a word at a time (multiply and shift, as in
/// MurmurHash3's finaliser), in four independent lanes of words that are folded
/// together at the end, so the processor works on four words at once instead of waiting
/// for each multiplication before the next: any edit changes it except with a chance of
/// about 2^-64. It is not cryptographic: it notices edits, it does not defend against
/// someone who can write the file (they can change the fences anyway). It is only ever
/// compared within one process, never stored.
public struct FenceFileFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// The number of bytes.
    public let size: Int
    /// The hash of the bytes.
    public let hash: UInt64

    /// The fingerprint of `contents`.
    public init(of contents: [UInt8]) {
        self.init(of: contents[...])
    }

    /// The fingerprint of `contents` (a part of a fence directory's snapshot).
    package init(of contents: ArraySlice<UInt8>) {
        size = contents.count
        let seed: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(contents.count)
        var lanes: (UInt64, UInt64, UInt64, UInt64) = (seed, ~seed, seed &* 3, seed &* 5)
        var hash = seed
        contents.withUnsafeBytes { raw in
            func word(_ offset: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) }
            var offset = 0
            while offset + 32 <= raw.count {
                lanes.0 = Self.mix(lanes.0 ^ word(offset))
                lanes.1 = Self.mix(lanes.1 ^ word(offset + 8))
                lanes.2 = Self.mix(lanes.2 ^ word(offset + 16))
                lanes.3 = Self.mix(lanes.3 ^ word(offset + 24))
                offset += 32
            }
            hash = Self.mix(Self.mix(Self.mix(Self.mix(hash ^ lanes.0) ^ lanes.1) ^ lanes.2) ^ lanes.3)
            while offset + 8 <= raw.count {
                hash = Self.mix(hash ^ word(offset))
                offset += 8
            }
            var tail: UInt64 = 0
            for (index, byte) in raw[offset...].enumerated() { tail |= UInt64(byte) << (8 * index) }
            hash = Self.mix(hash ^ tail)
        }
        self.hash = hash
    }

    /// "397 bytes, hash 0123456789abcdef", for logs.
    public var description: String {
        let hex = String(hash, radix: 16)
        return "\(size) bytes, hash \(String(repeating: "0", count: 16 - hex.count))\(hex)"
    }

    private static func mix(_ value: UInt64) -> UInt64 {
        var value = value &* 0xFF51_AFD7_ED55_8CCD
        value ^= value >> 33
        value = value &* 0xC4CE_B9FE_1A85_EC53
        return value ^ value >> 29
    }
}
