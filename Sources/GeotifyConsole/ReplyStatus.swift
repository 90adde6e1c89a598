import GeotifyCore

/// The HTTP status for a Geotify error code, so the JSON API answers a refused command
/// with the status a web client expects and the body an MQTT client would get.
package enum ReplyStatus {
    /// The status for `code` (400 for a refusal of the request as sent).
    package static func status(for code: ErrorCode) -> Int {
        switch code {
        case .notAllowed: 403
        // Understood, and refused whatever is sent: the fences it would change are not
        // this instance's to write (shared fences, or a single file, with several).
        case .readOnly: 403
        case .unknownDevice, .unknownFence, .unknownToken: 404
        case .duplicateIdentifier, .fenceLimit, .stale: 409
        case .expiredToken: 410
        // Another instance is the one to answer for the device (RFC 9110's "a server that is
        // unable or unwilling to produce an authoritative response for the target URI").
        case .otherShard: 421
        case .payloadTooLarge: 413
        case .rateLimited: 429
        case .invalidFile: 503
        case .io, .stateWrite, .fenceFile: 500
        default: 400
        }
    }
}
