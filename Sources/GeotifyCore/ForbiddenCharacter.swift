/// A character that identifiers and notes must not hold, and where it was found.
///
/// Identifiers become MQTT topic levels and log lines, notes become notification texts
/// and entity names on a dashboard. A newline in either forges log lines, and mosquitto
/// refuses a topic holding a control character or a Unicode non-character
/// (`mosquitto_validate_utf8`: "Malformed UTF-8"), so such a fence could never be
/// published. The rule is mosquitto's, plus U+FFFD, the replacement character that
/// invalid UTF-8 turns into when it is read into a string (a command-line argument, a
/// topic decoded leniently): text holding it was not valid UTF-8 where it came from.
///
/// Refused: U+0000–U+001F and U+007F–U+009F (control characters), U+FDD0–U+FDEF and
/// every U+xFFFE and U+xFFFF (non-characters), and U+FFFD.
public struct ForbiddenCharacter: Sendable, Equatable, CustomStringConvertible {
    /// The character refused.
    public let scalar: Unicode.Scalar
    /// Its offset in the text's UTF-8 bytes.
    public let offset: Int

    /// The first forbidden character in `text`, or nil when there is none. Plain ASCII
    /// text costs one pass over its bytes.
    public static func first(in text: String) -> ForbiddenCharacter? {
        var asciiOnly = true
        for (offset, byte) in text.utf8.enumerated() {
            if byte < 0x20 || byte == 0x7F { return ForbiddenCharacter(scalar: Unicode.Scalar(byte), offset: offset) }
            if byte >= 0x80 { asciiOnly = false }
        }
        if asciiOnly { return nil }
        var offset = 0
        for scalar in text.unicodeScalars {
            if isForbidden(scalar) { return ForbiddenCharacter(scalar: scalar, offset: offset) }
            offset += UTF8.width(scalar)
        }
        return nil
    }

    /// Whether `scalar` is one of the refused characters.
    public static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || (0xFDD0...0xFDEF).contains(value)
            || value & 0xFFFE == 0xFFFE || value == 0xFFFD
    }

    /// "U+000A (a control character) at byte 5", for messages: the character is named,
    /// never written, so the message itself stays printable.
    public var description: String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        let kind: String
        switch scalar.value {
        case 0xFFFD: kind = "the replacement character, left by invalid UTF-8"
        case 0xFDD0...0xFDEF: kind = "a Unicode non-character"
        case _ where scalar.value & 0xFFFE == 0xFFFE: kind = "a Unicode non-character"
        default: kind = "a control character"
        }
        return "\(code) (\(kind)) at byte \(offset)"
    }
}
