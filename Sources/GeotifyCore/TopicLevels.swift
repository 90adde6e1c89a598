/// Topic levels as MQTT cuts and compares them: at every '/' byte, and equal only byte
/// for byte. Device identifiers, subscription filters and device filters are all read
/// this way, so that the bridge sees the levels the broker sees. Reading them as Swift's
/// characters would not: a character joins a combining mark to the '/' or '+' before it
/// ("/\u{301}" is one character, not a '/'), and canonically equivalent text compares
/// equal although the broker tells it apart.
package enum TopicLevels {
    /// The levels of `text` (a topic, a filter or a device identifier), empty ones
    /// included: `a//b` has three, `a/` two.
    package static func split(_ text: String) -> [Substring.UTF8View] {
        text.utf8.split(separator: slash, omittingEmptySubsequences: false)
    }

    /// The first level of `text`: `alice` of `alice/phone`, a device's owner. Read by
    /// scalars, since a '/' is one: a character could join the '/' to the scalar before it.
    package static func first(of text: String) -> Substring {
        Substring(text.unicodeScalars.prefix { $0 != "/" })
    }

    /// `levels` joined by '/'.
    package static func joined(_ levels: some Sequence<Substring.UTF8View>) -> String {
        var bytes: [UInt8] = []
        for (index, level) in levels.enumerated() {
            if index > 0 { bytes.append(slash) }
            bytes.append(contentsOf: level)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `level` is the single-level wildcard, `+`.
    package static func isPlus(_ level: some Collection<UInt8>) -> Bool {
        level.count == 1 && level.first == UInt8(ascii: "+")
    }

    /// Whether `level` is the multi-level wildcard, `#`.
    package static func isHash(_ level: some Collection<UInt8>) -> Bool {
        level.count == 1 && level.first == UInt8(ascii: "#")
    }

    /// How a filter's levels use a wildcard as MQTT does not allow.
    package enum WildcardMisuse: Sendable, Equatable {
        /// A '#' that is not a whole level, or not the last one.
        case hashNotWholeLastLevel
        /// A '+' that is not a whole level.
        case plusNotWholeLevel
    }

    /// The first misuse of a wildcard in a filter's `levels`, nil when there is none.
    package static func wildcardMisuse(in levels: [Substring.UTF8View]) -> WildcardMisuse? {
        for (index, level) in levels.enumerated() {
            if level.contains(UInt8(ascii: "#")) && (!isHash(level) || index != levels.count - 1) { return .hashNotWholeLastLevel }
            if level.contains(UInt8(ascii: "+")) && !isPlus(level) { return .plusNotWholeLevel }
        }
        return nil
    }

    private static let slash = UInt8(ascii: "/")
}
