import Foundation
import GeotifyJSON
import GeotifyStore

/// A token, password or signing key, read from a file or an environment variable when the
/// settings are loaded, never written in the settings file itself.
///
/// Its `description` (and its mirror) names only where it came from, so a secret that reaches a log line,
/// an error or the statistics by mistake shows as `<secret from env GOTIFY_TOKEN>`.
/// Its `redactionForms` are blanked out of text a target sent back (an error page that
/// echoes the request) before that text is stored or printed (`Redaction`).
package struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The secret itself: only for building the request that needs it.
    package let value: String
    /// Where it came from, safe to show: `file /run/secrets/ntfy` or `env NTFY_TOKEN`.
    package let source: String

    package init(value: String, source: String) {
        self.value = value
        self.source = source
    }

    package var description: String { "<secret from \(source)>" }
    package var debugDescription: String { description }
    /// No children, so `dump` and reflection show the description, not the value.
    package var customMirror: Mirror { Mirror(self, children: [:]) }

    /// The secret in the environment variable `name`; throws when it is unset or empty.
    /// The error's message is the reason alone: the settings parser adds file and key.
    package static func environment(_ name: String, in environment: [String: String]) throws(DeliverySettingsError) -> Secret {
        guard let value = environment[name] else { throw DeliverySettingsError("the environment variable \(name) is not set") }
        guard !value.isEmpty else { throw DeliverySettingsError("the environment variable \(name) is empty") }
        return Secret(value: value, source: "env \(name)")
    }

    /// The secret in the file at `path`: one line, its trailing line break dropped (`echo
    /// token > file` writes one); throws when it is missing, empty or has more lines.
    package static func file(_ path: String) throws(DeliverySettingsError) -> Secret {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, within: .secret)
        } catch {
            throw DeliverySettingsError("cannot read the file \(path): \(error.reason)")
        }
        guard let bytes else { throw DeliverySettingsError("cannot read the file \(path): no such file") }
        // A leading byte order mark is no part of the secret.
        guard let text = String(validating: ByteOrderMark.dropped(from: bytes), as: UTF8.self) else { throw DeliverySettingsError("the file \(path) is not UTF-8 text") }
        // `\r\n` is one Character in Swift, so one dropLast takes either line break.
        let value = text.hasSuffix("\r\n") || text.hasSuffix("\n") ? String(text.dropLast()) : text
        guard !value.isEmpty else { throw DeliverySettingsError("the file \(path) is empty") }
        guard !value.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) else {
            throw DeliverySettingsError("the file \(path) holds more than one line")
        }
        return Secret(value: value, source: "file \(path)")
    }
}

extension Secret {
    /// The secret as it may be sent or echoed on any target: itself, percent-encoded (a
    /// URL's way, a space as `%20`), form-encoded (a space as `+`), each with upper- and
    /// lower-case hex digits, and escaped in a JSON string (with and without `\/`). A
    /// destination adds the forms of its own (`Destination.redaction`).
    package var redactionForms: [Redaction.Form] {
        let percent = Secret.percentEncoded(value, keeping: "-._~", space: "%20")
        let form = Secret.percentEncoded(value, keeping: "*-._", space: "+")
        let json = String(JSONWriter().string(.string(value)).dropFirst().dropLast())
        return [value, percent, Secret.lowercasedEscapes(percent), form, Secret.lowercasedEscapes(form), json,
                json.replacingOccurrences(of: "/", with: "\\/")]
            .map { Redaction.Form($0, replacement: description) }
    }

    /// `text` with bytes other than letters, digits and those of `kept` as `%XX`, a space
    /// as `space`.
    private static func percentEncoded(_ text: String, keeping kept: String, space: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || kept.utf8.contains(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else if byte == UInt8(ascii: " ") {
                out += space
            } else {
                out += "%" + Digest.hex([byte]).uppercased()
            }
        }
        return out
    }

    /// `encoded` with the hex digits of its `%XX` escapes in lower case.
    private static func lowercasedEscapes(_ encoded: String) -> String {
        var out = ""
        var digitsLeft = 0
        for character in encoded {
            if digitsLeft > 0 {
                out += character.lowercased()
                digitsLeft -= 1
            } else {
                out.append(character)
                if character == "%" { digitsLeft = 2 }
            }
        }
        return out
    }
}
