import CSodium

/// libsodium's `crypto_secretbox` (XSalsa20 encryption, Poly1305 authentication) with one
/// 32-byte key, in the framing the OwnTracks apps and Recorder use: the 24-byte nonce,
/// then the 16-byte MAC, then the ciphertext (what `crypto_secretbox_easy` writes, with
/// the nonce in front), and base64 in the standard alphabet with padding around it.
///
/// The only place Geotify calls libsodium: a thin wrapper, so the rest of the code sees
/// byte arrays and optionals, never pointers or C return codes.
package struct SecretBox: Sendable {
    /// The key length, `crypto_secretbox_KEYBYTES`.
    package static let keyBytes = Int(crypto_secretbox_KEYBYTES)
    /// The nonce length, `crypto_secretbox_NONCEBYTES`.
    package static let nonceBytes = Int(crypto_secretbox_NONCEBYTES)
    /// The authentication tag's length, `crypto_secretbox_MACBYTES`.
    package static let macBytes = Int(crypto_secretbox_MACBYTES)

    /// `sodium_init()` succeeded: libsodium picked its implementations and seeded its
    /// random generator. It is idempotent and thread-safe; this runs it once.
    private static let ready: Bool = sodium_init() >= 0

    private let key: [UInt8]

    /// A box for `key`, which must be exactly `keyBytes` long; nil when it is not, or when
    /// libsodium cannot be initialised.
    package init?(key: [UInt8]) {
        guard key.count == SecretBox.keyBytes, SecretBox.ready else { return nil }
        self.key = key
    }

    /// The message in `sealed` (nonce, MAC, ciphertext); nil when it is too short to hold
    /// a nonce and a MAC, or when the MAC does not match (a wrong key, or altered bytes).
    package func open(_ sealed: [UInt8]) -> [UInt8]? {
        guard sealed.count >= SecretBox.nonceBytes + SecretBox.macBytes else { return nil }
        let nonce = Array(sealed.prefix(SecretBox.nonceBytes))
        let box = Array(sealed.dropFirst(SecretBox.nonceBytes))
        var message = [UInt8](repeating: 0, count: box.count - SecretBox.macBytes)
        let result = crypto_secretbox_open_easy(&message, box, UInt64(box.count), nonce, key)
        return result == 0 ? message : nil
    }

    /// `message` sealed under a fresh random nonce: nonce, MAC, ciphertext, as the apps
    /// send it.
    package func seal(_ message: [UInt8]) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: SecretBox.nonceBytes)
        randombytes_buf(&nonce, nonce.count)
        var box = [UInt8](repeating: 0, count: SecretBox.macBytes + message.count)
        _ = crypto_secretbox_easy(&box, message, UInt64(message.count), nonce, key)
        return nonce + box
    }

    /// The bytes `text` encodes in standard base64 (`+`, `/`, `=` padding), as the apps
    /// write it; nil for any other character (line breaks too), a missing or misplaced
    /// `=`, or a length that is not a multiple of four, as the Recorder's decoder. (No
    /// end pointer is passed, so libsodium refuses a text it cannot parse to the end.)
    package static func bytes(base64 text: String) -> [UInt8]? {
        let count = text.utf8.count
        guard ready, count % 4 == 0 else { return nil }
        var decoded = [UInt8](repeating: 0, count: count / 4 * 3)
        var length = 0
        let result = sodium_base642bin(&decoded, decoded.count, text, count, nil, &length, nil, sodium_base64_VARIANT_ORIGINAL)
        guard result == 0 else { return nil }
        return Array(decoded.prefix(length))
    }

    /// `bytes` in standard base64 with padding.
    package static func base64(_ bytes: [UInt8]) -> String {
        var encoded = [CChar](repeating: 0, count: 4 * ((bytes.count + 2) / 3) + 1)
        _ = sodium_bin2base64(&encoded, encoded.count, bytes, bytes.count, sodium_base64_VARIANT_ORIGINAL)
        return String(decoding: encoded.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
