/// Why an incoming message (a position, a command) was refused: a kind, which is what
/// the error counters and the `geotify/error` topic are keyed by, and a specific
/// message for the person who has to fix the sender.
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The category of a refusal.
    public enum Kind: String, Sendable, CaseIterable {
        case emptyPayload = "empty_payload"
        case payloadTooLarge = "payload_too_large"
        case invalidJSON = "invalid_json"
        case notAnObject = "not_an_object"
        case missingField = "missing_field"
        case wrongType = "wrong_type"
        case outOfRange = "out_of_range"
        case invalidTopic = "invalid_topic"
        case unknownDevice = "unknown_device"
        case unknownAction = "unknown_action"
        case notAllowed = "not_allowed"
        case tooManyDevices = "too_many_devices"
        case unknownToken = "unknown_token"
        case expiredToken = "expired_token"
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}
