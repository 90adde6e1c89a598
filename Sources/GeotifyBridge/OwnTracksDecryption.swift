import GeotifyJSON

/// Opens OwnTracks encrypted payloads, as the OwnTracks Recorder does (its `decrypt()`
/// in recorder.c): `{"_type":"encrypted","data":"<base64>"}`, where `data` is the
/// 24-byte nonce followed by the `crypto_secretbox_easy` output (MAC, ciphertext) under
/// the device's key (`OwnTracksKeys`), and the cleartext is the JSON message the app
/// would otherwise have sent. (https://owntracks.org/booklet/features/encrypt/)
///
/// A pure function of the payload and the keys: no I/O, no clock.
public struct OwnTracksDecryption: Sendable {
    public let keys: OwnTracksKeys

    public init(keys: OwnTracksKeys) {
        self.keys = keys
    }

    /// The cleartext of `payload` from `device` when it is an encrypted envelope; nil when
    /// it is anything else (another `_type`, not JSON, larger than `maximumBytes`), which
    /// is left to the location decoder to take or refuse. The cleartext is a JSON object
    /// and not itself an envelope: one layer is opened, as the apps add one.
    public func open(_ payload: [UInt8], device: String, maximumBytes: Int) throws(DecryptionError) -> [UInt8]? {
        guard payload.count <= maximumBytes,
              case .object(let envelope)? = try? JSONParser(maxDepth: 16).parse(payload, keepingMembers: OwnTracksDecryption.members),
              envelope["_type"] == "encrypted"
        else { return nil }
        guard case .string(let data)? = envelope["data"] else {
            throw DecryptionError(.invalidEnvelope, "an encrypted OwnTracks message needs \"data\", a base64 string, not \(envelope["data"]?.kindDescription ?? "nothing")")
        }
        guard let key = keys.key(for: device), let box = SecretBox(key: key) else {
            throw DecryptionError(.noKey, "no secret for the device \"\(device)\" to decrypt its payload with; add a line \"\(device) <secret>\" to the OwnTracks keys file (owntracksKeysFile)")
        }
        guard let sealed = SecretBox.bytes(base64: data) else {
            throw DecryptionError(.invalidBase64, "\"data\" is not standard base64 (A-Z a-z 0-9 + /, padded with = to a multiple of 4 characters)")
        }
        guard let cleartext = box.open(sealed) else {
            let reason = sealed.count < SecretBox.nonceBytes + SecretBox.macBytes
                ? "it is \(sealed.count) bytes, shorter than a nonce and a MAC (\(SecretBox.nonceBytes + SecretBox.macBytes))"
                : "the MAC does not match: the device's secret differs from the one for \"\(device)\", or the message was altered"
            throw DecryptionError(.undecryptable, "the payload cannot be decrypted: \(reason)")
        }
        let inner: JSON
        do {
            inner = try JSONParser(maxDepth: 16).parse(cleartext, keepingMembers: OwnTracksDecryption.members)
        } catch {
            throw DecryptionError(.notJSON, "the decrypted payload is not JSON: \(error)")
        }
        guard case .object(let object) = inner else {
            throw DecryptionError(.notJSON, "the decrypted payload must be a JSON object, not \(inner.kindDescription)")
        }
        if object["_type"] == "encrypted" {
            throw DecryptionError(.invalidEnvelope, "the decrypted payload is itself encrypted; the apps encrypt once")
        }
        return cleartext
    }

    /// The members an envelope is read from; the parser skips every other one.
    private static let members = JSONParser.MemberNames(["_type", "data"])
}
