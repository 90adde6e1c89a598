import Foundation

/// The rules for device and fence identifiers. Both become MQTT topic levels
/// (`geotify/event/<device>`, later `.../<device>/<fence>`), so they must not hold
/// wildcards or empty levels, and fence identifiers must be a single level. Neither may
/// hold a `ForbiddenCharacter` (control characters, non-characters, U+FFFD), which a
/// broker refuses in a topic and which would forge or garble log lines, nor an
/// `InvisibleFormatCharacter` (bidirectional controls, zero-width spaces), which makes
/// one display as another. Both must also be in Unicode normalization form C, so that
/// two identifiers the broker tells apart are never one device or one fence here.
public enum Identifier {
    /// The longest identifier accepted, in UTF-8 bytes.
    public static let maximumLength = 200

    /// Why `device` is not a usable device identifier, or nil when it is.
    public static func problem(device: String) -> String? {
        if isPlainDevice(device) { return nil }
        if device.isEmpty { return "a device identifier must not be empty" }
        if device.utf8.count > maximumLength { return "a device identifier must be at most \(maximumLength) bytes" }
        if let character = ForbiddenCharacter.first(in: device) {
            return "a device identifier must not contain control characters, non-characters or invalid UTF-8; found \(character)"
        }
        if let character = InvisibleFormatCharacter.first(in: device) {
            return "a device identifier must not contain invisible formatting characters (bidirectional controls, zero-width spaces), which make it display as another; found \(character)"
        }
        // Byte by byte, as MQTT reads a topic: a character of Swift's joins a combining
        // mark to the '+', '#' or '/' before it ("+\u{301}" is one), which compared
        // whole would hide a wildcard or an empty level.
        if device.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) {
            return "the device identifier \"\(device)\" must not contain '+' or '#'"
        }
        if TopicLevels.split(device).contains(where: \.isEmpty) {
            return "the device identifier \"\(device)\" must not have empty topic levels (a leading, trailing or double '/')"
        }
        // Swift's strings are equal when canonically equivalent ("zo\u{EB}" and
        // "zoe\u{308}"), the broker's topics only when their bytes are: two broker users
        // so named would be one device to the bridge (one state, one owner's count, one
        // fence list) and two to the broker's access rules. With every identifier in
        // normalization form C, equal strings are equal bytes.
        if !isComposed(device) {
            return "the device identifier \"\(device)\" must be in Unicode normalization form C (composed characters, as keyboards type them)"
        }
        return nil
    }

    /// Whether `device` is printable ASCII without wildcards or empty levels, at most
    /// `maximumLength` bytes: what nearly every device id is, told in one pass over its
    /// bytes (this runs for every message) before the thorough checks.
    @inlinable
    static func isPlainDevice(_ device: String) -> Bool {
        var device = device
        return device.withUTF8 { bytes in
            guard !bytes.isEmpty, bytes.count <= maximumLength, bytes[0] != UInt8(ascii: "/") else { return false }
            var previous = UInt8(ascii: "/")
            for byte in bytes {
                guard byte > 0x20, byte < 0x7F, byte != UInt8(ascii: "+"), byte != UInt8(ascii: "#") else { return false }
                if byte == UInt8(ascii: "/") && previous == UInt8(ascii: "/") { return false }
                previous = byte
            }
            return previous != UInt8(ascii: "/")
        }
    }

    /// Whether `text` is in Unicode normalization form C. At once when every scalar is
    /// below U+0300, as in Latin-1 names: none of those changes under normalization, and
    /// all have combining class 0 (the quick check's first "maybe" is U+0300, the
    /// combining grave accent); their UTF-8 bytes are all below 0xCC. Otherwise by
    /// normalizing it, which runs for every message of such a device.
    package static func isComposed(_ text: String) -> Bool {
        if text.utf8.allSatisfy({ $0 < 0xCC }) { return true }
        return text.precomposedStringWithCanonicalMapping.utf8.elementsEqual(text.utf8)
    }

    /// Why `fence` is not a usable fence identifier, or nil when it is.
    public static func problem(fence: String) -> String? {
        if fence.isEmpty { return "a fence identifier must not be empty" }
        if fence.utf8.count > maximumLength { return "a fence identifier must be at most \(maximumLength) bytes" }
        if let character = ForbiddenCharacter.first(in: fence) {
            return "a fence identifier must not contain control characters, non-characters or invalid UTF-8; found \(character)"
        }
        if let character = InvisibleFormatCharacter.first(in: fence) {
            return "a fence identifier must not contain invisible formatting characters (bidirectional controls, zero-width spaces), which make it display as another; found \(character)"
        }
        if fence.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "/") }) {
            return "the fence identifier \"\(fence)\" must not contain '/', '+' or '#'"
        }
        // As for devices: "cafe\u{301}" and "caf\u{E9}" are one fence to Swift and two
        // presence topics (and Home Assistant entities) to the broker, so a rename from
        // one to the other changed nothing here and left the old topic retained, stale.
        if !isComposed(fence) {
            return "the fence identifier \"\(fence)\" must be in Unicode normalization form C (composed characters, as keyboards type them)"
        }
        return nil
    }
}
