import Foundation
import GeotifyJSON
import GeotifyStore

/// The secrets OwnTracks devices encrypt their payloads with, per device, read from a
/// secret file (the `owntracksKeysFile` setting) kept apart from the settings so that
/// it can be readable by the bridge alone.
///
/// The file is the input of the OwnTracks Recorder's `ocat --load=keys`, widened with
/// comments: one device a line, its name, one space, then the secret, which is the rest
/// of the line exactly (spaces included):
///
/// ```
/// # OwnTracks payload encryption secrets (the app's Settings → Encryption key)
/// alice/phone correct horse battery staple
/// bob-tablet s3cr1t
/// * the secret of every other device
/// ```
///
/// - A name is the device as Geotify names it (`alice/phone`, from
///   `owntracks/alice/phone`), or the Recorder's key for it (`alice-phone`: user, `-`,
///   device, lower case, spaces as `-`), so a Recorder's keys load as they are; `*` is
///   the secret of every device without a line of its own. An exact name wins over a
///   Recorder key, which wins over `*`.
/// - Empty lines and lines starting with `#` are skipped; a `\r` before the line break
///   is not part of the secret, nor a byte order mark at the start of the file part of
///   the first line.
/// - The key is the secret's UTF-8 bytes, padded with zero bytes to 32, as the apps and
///   the Recorder make it (https://owntracks.org/booklet/features/encrypt/: "an up to 32
///   octet long passphrase (which the apps pad with binary zeroes)"). A longer secret is
///   cut to 32 bytes as the apps cut it, with a warning.
package struct OwnTracksKeys: Sendable {
    /// The name of the secret every device without a line of its own uses.
    package static let anyDevice = "*"

    /// Things the person should know that do not stop the file from being used.
    package private(set) var warnings: [String] = []
    private var keys: [String: [UInt8]] = [:]

    /// No keys: every encrypted payload is refused for want of one.
    package init() {}

    /// Reads the file's contents; `file` names it in messages. Refuses a line without a
    /// space, with an empty name or secret, or naming a device a second time, with the
    /// line number.
    package init(parsing bytes: [UInt8], file: String) throws(SettingsError) {
        var line = 0
        // Split on `\r\n` too: Swift reads it as one character, not a `\r` then a `\n`.
        // A leading byte order mark would be part of the first line's name.
        let lines = String(decoding: ByteOrderMark.dropped(from: bytes), as: UTF8.self).split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for var text in lines {
            line += 1
            if text.hasSuffix("\r") { text.removeLast() }
            if text.isEmpty || text.hasPrefix("#") { continue }
            guard let space = text.firstIndex(of: " ") else {
                throw SettingsError("\(file):\(line): a line is a device name, one space, then its secret; this one has no space")
            }
            let name = String(text[..<space])
            let secret = text[text.index(after: space)...]
            guard !name.isEmpty else { throw SettingsError("\(file):\(line): the line starts with a space; it must start with the device name") }
            guard !secret.isEmpty else { throw SettingsError("\(file):\(line): the secret of \"\(name)\" is empty") }
            guard keys[name] == nil else { throw SettingsError("\(file):\(line): \"\(name)\" has a secret already, on an earlier line") }
            let utf8 = Array(secret.utf8)
            if utf8.count > SecretBox.keyBytes {
                warnings.append("\(file):\(line): the secret of \"\(name)\" is \(utf8.count) bytes; only its first \(SecretBox.keyBytes) are used, as the OwnTracks apps do")
            }
            if secret.last?.isWhitespace == true {
                warnings.append("\(file):\(line): the secret of \"\(name)\" ends in white space, which is part of it")
            }
            keys[name] = OwnTracksKeys.key(secret: String(secret))
        }
    }

    /// Reads the secret file at `path`, warning when other users may read it.
    package init(contentsOf path: String) throws(SettingsError) {
        let bytes: [UInt8]?
        do {
            bytes = try AtomicFile.read(path, within: .ownTracksKeys)
        } catch {
            throw SettingsError("cannot read the OwnTracks keys file \(path): \(error)")
        }
        guard let bytes else { throw SettingsError("cannot read the OwnTracks keys file \(path): no such file") }
        try self.init(parsing: bytes, file: path)
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & 0o077 != 0 {
            warnings.append("the OwnTracks keys file \(path) is readable by other users; chmod 600 it")
        }
    }

    /// Whether there is no key at all.
    package var isEmpty: Bool { keys.isEmpty }

    /// The key `device` encrypts with: its own line, else its Recorder key's line, else
    /// `*`'s; nil when none applies.
    package func key(for device: String) -> [UInt8]? {
        keys[device] ?? keys[OwnTracksKeys.recorderName(of: device)] ?? keys[OwnTracksKeys.anyDevice]
    }

    /// The key the apps make of `secret`: its UTF-8 bytes, cut or padded with zero bytes
    /// to 32.
    package static func key(secret: String) -> [UInt8] {
        let bytes = Array(secret.utf8.prefix(SecretBox.keyBytes))
        return bytes + [UInt8](repeating: 0, count: SecretBox.keyBytes - bytes.count)
    }

    /// The OwnTracks Recorder's key name for `device` (`user/device`): levels joined by
    /// `-`, lower case, each space a `-` (`Alice/My Phone` is `alice-my-phone`).
    package static func recorderName(of device: String) -> String {
        device.lowercased().replacingOccurrences(of: "/", with: "-").replacingOccurrences(of: " ", with: "-")
    }
}
