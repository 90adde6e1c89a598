import GeotifyCore

/// The HTTP status for a Geotify error code, so the JSON API answers a refused command
/// with the status a web client expects and the body an MQTT client would get.
package enum ReplyStatus {
    /// The status for `code`.
    package static func status(for code: ErrorCode) -> Int {
        status(for: code.rawValue)
    }

    /// The status for `code` as a reply carries it (400 for codes this table does not know).
    package static func status(for code: String) -> Int {
        switch code {
        case "not_allowed": 403
        case "unknown_device", "unknown_fence", "unknown_token": 404
        case "duplicate_identifier", "fence_limit", "stale": 409
        case "expired_token": 410
        // Another instance is the one to answer for the device (RFC 9110's "a server that is
        // unable or unwilling to produce an authoritative response for the target URI").
        case "other_shard": 421
        case "payload_too_large": 413
        case "rate_limited": 429
        case "invalid_file": 503
        case "io", "state_write", "fence_file": 500
        default: 400
        }
    }
}
