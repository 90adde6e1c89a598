/// Why an OwnTracks encrypted payload (`{"_type":"encrypted","data":...}`) could not be
/// opened: a kind, for counters and `geotify/error`, and a message for the person who
/// set up the device's secret.
public struct DecryptionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The category of a refusal.
    public enum Kind: String, Sendable, CaseIterable {
        /// No secret applies to the device (`owntracksKeysFile`).
        case noKey = "no_decryption_key"
        /// The envelope has no `data` string, or holds another envelope.
        case invalidEnvelope = "invalid_envelope"
        /// `data` is not standard base64.
        case invalidBase64 = "invalid_base64"
        /// The MAC does not match: a different secret on the device, or altered bytes.
        case undecryptable
        /// The decrypted bytes are not a JSON object.
        case notJSON = "decrypted_not_json"
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}
