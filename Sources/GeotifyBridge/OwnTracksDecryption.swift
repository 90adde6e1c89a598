import GeotifyCore
import GeotifyJSON

/// Opens OwnTracks encrypted payloads, as the OwnTracks Recorder does (its `decrypt()`
/// in recorder.c): `{"_type":"encrypted","data":"<base64>"}`, where `data` is the
/// 24-byte nonce followed by the `crypto_secretbox_easy` output (MAC, ciphertext) under
/// the device's key (`OwnTracksKeys`), and the cleartext is the JSON message the app
/// would otherwise have sent. (https://owntracks.org/booklet/features/encrypt/)
///
/// A pure function of the payload and the keys: no I/O, no clock.
package struct OwnTracksDecryption: Sendable {
    package let keys: OwnTracksKeys

    package init(keys: OwnTracksKeys) {
        self.keys = keys
    }

    /// The cleartext of an encrypted message from `device` whose envelope's `data` member
    /// is `envelopeData` (nil when it has none): the bytes the app would have sent without
    /// encryption. Refuses, with a specific code, an envelope without a `data` string, a
    /// device without a key, `data` that is not base64, and a MAC that does not match.
    package func cleartext(ofData envelopeData: JSON?, device: String) throws(InputError) -> [UInt8] {
        guard case .string(let data)? = envelopeData else {
            throw InputError(.invalidEnvelope, "an encrypted OwnTracks message needs \"data\", a base64 string, not \(envelopeData?.kindDescription ?? "nothing")")
        }
        guard let key = keys.key(for: device), let box = SecretBox(key: key) else {
            throw InputError(.noDecryptionKey, "no secret for the device \"\(device)\" to decrypt its payload with; add a line \"\(device) <secret>\" to the OwnTracks keys file (owntracksKeysFile)")
        }
        guard let sealed = SecretBox.bytes(base64: data) else {
            throw InputError(.invalidBase64, "\"data\" is not standard base64 (A-Z a-z 0-9 + /, padded with = to a multiple of 4 characters)")
        }
        guard let cleartext = box.open(sealed) else {
            let reason = sealed.count < SecretBox.nonceBytes + SecretBox.macBytes
                ? "it is \(sealed.count) bytes, shorter than a nonce and a MAC (\(SecretBox.nonceBytes + SecretBox.macBytes))"
                : "the MAC does not match: the device's secret differs from the one for \"\(device)\", or the message was altered"
            throw InputError(.undecryptable, "the payload cannot be decrypted: \(reason)")
        }
        return cleartext
    }
}
