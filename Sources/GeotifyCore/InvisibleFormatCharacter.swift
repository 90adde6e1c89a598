/// An invisible formatting character that identifiers must not hold, and where it was
/// found: the characters that make an identifier display as another.
///
/// A bidirectional override turns what follows around (a tracker publishing on
/// `owntracks/mallory/\u{202E}enohp s'ecila` showed as "alice's phone" in a log line or
/// a dashboard), and a zero-width space makes a fence `home\u{200B}` that looks like
/// `home`. Identifiers are names, never prose, so none of these has a use in one. The
/// zero-width joiner and non-joiner (U+200D, U+200C) are allowed: some scripts and emoji
/// need them. Notes, which are free text, may hold any of these (a right-to-left note may
/// need its marks); the log writes them escaped (`Logger`).
///
/// Refused: U+200B (zero-width space), U+200E and U+200F (left-to-right and
/// right-to-left marks), U+202A–U+202E (bidirectional embeddings and overrides),
/// U+2060–U+2064 (word joiner and invisible operators), U+2066–U+2069 (bidirectional
/// isolates) and U+FEFF (zero-width no-break space, the byte order mark).
package struct InvisibleFormatCharacter: Sendable, Equatable, CustomStringConvertible {
    /// The character refused.
    package let scalar: Unicode.Scalar
    /// Its offset in the text's UTF-8 bytes.
    package let offset: Int

    /// The first such character in `text`, or nil when there is none. All of them are
    /// three bytes in UTF-8 starting 0xE2 or 0xEF, so text without those bytes costs one
    /// pass over them.
    package static func first(in text: String) -> InvisibleFormatCharacter? {
        guard text.utf8.contains(where: { $0 == 0xE2 || $0 == 0xEF }) else { return nil }
        var offset = 0
        for scalar in text.unicodeScalars {
            if isInvisible(scalar) { return InvisibleFormatCharacter(scalar: scalar, offset: offset) }
            offset += UTF8.width(scalar)
        }
        return nil
    }

    /// Whether `scalar` is one of the refused characters.
    package static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x200B, 0x200E, 0x200F, 0x202A...0x202E, 0x2060...0x2064, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }

    /// "U+202E (a bidirectional control) at byte 8", for messages: the character is
    /// named, never written, so the message displays as it reads.
    package var description: String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let kind = switch scalar.value {
        case 0x200B: "a zero-width space"
        case 0xFEFF: "a zero-width no-break space (byte order mark)"
        case 0x2060...0x2064: "an invisible joiner or operator"
        default: "a bidirectional control"
        }
        return "U+\(hex) (\(kind)) at byte \(offset)"
    }
}
