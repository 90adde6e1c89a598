import GeotifyCore

/// The code a refused request is answered and counted with (`HTTPResponse.refusalCode`):
/// one of the HTTP face's own (`HTTPRefusalCode`), or one of the bridge's (`ErrorCode`),
/// which the console passes through for commands, imports and posted positions.
///
/// Both go out in the same `error.code` field and are counted under the same
/// `http_refused.<code>`, so `not_allowed` and `payload_too_large`, which both
/// vocabularies hold with the same meaning and status, are one code on the wire and in
/// the counters whichever side refused.
package enum RefusalCode: Sendable, Equatable {
    /// A refusal of the HTTP layer's own.
    case http(HTTPRefusalCode)
    /// A refusal of the bridge's, passed through by the console.
    case domain(ErrorCode)

    /// The code as it goes on the wire.
    package var rawValue: String {
        switch self {
        case .http(let code): code.rawValue
        case .domain(let code): code.rawValue
        }
    }

    /// The counter a refusal with this code is counted under: `http_refused.<code>`.
    package var counter: String {
        HTTPRefusalCode.counter(for: rawValue)
    }
}
