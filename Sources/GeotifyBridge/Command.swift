import GeotifyJSON

/// A request on `geotify/cmd/<device>`, decoded from `{"action": ...}`.
public enum Command: Sendable, Equatable {
    /// Set the device's badge to 0 and republish it: the app's "became active".
    case resetBadge

    /// The actions understood, for error messages.
    public static let actions = ["resetBadge"]

    /// Decodes a command payload, refusing anything malformed with a specific error.
    public init(payload: [UInt8], maximumBytes: Int) throws(InputError) {
        if payload.isEmpty { throw InputError(.emptyPayload, "the command is empty; send {\"action\": \"resetBadge\"}") }
        if payload.count > maximumBytes {
            throw InputError(.payloadTooLarge, "the command is \(payload.count) bytes; at most \(maximumBytes) are accepted")
        }
        let json: JSON
        do {
            json = try JSONParser(maxDepth: 16).parse(payload)
        } catch {
            throw InputError(.invalidJSON, "the command is not JSON: \(error)")
        }
        guard case .object(let object) = json else {
            throw InputError(.notAnObject, "a command must be a JSON object, not \(json.kindDescription)")
        }
        switch object["action"] {
        case nil:
            throw InputError(.missingField, "missing \"action\" (one of \(Command.actions.joined(separator: ", ")))")
        case .string("resetBadge")?:
            self = .resetBadge
        case .string(let action)?:
            throw InputError(.unknownAction, "unknown action \"\(action)\" (one of \(Command.actions.joined(separator: ", ")))")
        case let other?:
            throw InputError(.wrongType, "\"action\" must be a string, not \(other.kindDescription)")
        }
    }
}
