import Foundation
import GeotifyJSON
import GeotifyStore

/// A token, password or signing key, read from a file or an environment variable when the
/// settings are loaded, never written in the settings file itself.
///
/// Its `description` (and its mirror) names only where it came from, so a secret that reaches a log line,
/// an error or the statistics by mistake shows as `<secret from env GOTIFY_TOKEN>`.
/// `redact(_:)` blanks a secret out of text a target sent back (an error page that echoes
/// the request) before that text is stored or printed.
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

    /// `text` with every occurrence of the secret replaced by its description.
    package func redact(_ text: String) -> String {
        text.replacingOccurrences(of: value, with: description)
    }
}
