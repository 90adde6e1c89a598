/// The HTTP face's own refusal codes: what the server, the site in front of the handlers
/// (`HTTPApplication`) and the console answer or count when they refuse a request for a
/// reason of HTTP's (no route, no login, a limit, a client that does not keep up), as
/// opposed to the bridge's `ErrorCode`s, which the console passes through for commands,
/// imports and positions (`HTTPResponse.refusal(status:domainCode:_:)`; a response holds
/// either as a `RefusalCode`).
///
/// Each code goes on the wire as `{"ok": false, "error": {"code": ...}}` with its
/// `status`, and is counted as `http_refused.<code>` (`counter`), which Prometheus shows as
/// `geotify_http_refused_total{reason="<code>"}`. One type, so a call site names the code
/// once and its status follows, rather than a number and a string that can drift apart.
/// The raw values are the stable wire form (clients and docs/http.md use them): never
/// rename one. Two are `ErrorCode`s too and mean the same there, `not_allowed` and
/// `payload_too_large`; a test keeps any other code from being both.
package enum HTTPRefusalCode: String, Sendable, CaseIterable {
    // Routing and logins (`HTTPApplication`, `StaticFiles`).
    case notFound = "not_found"
    /// The path exists but not for this method (answered with `Allow`).
    case methodNotAllowed = "method_not_allowed"
    /// No login, a malformed `Authorization` header or wrong credentials (answered with a
    /// `WWW-Authenticate` challenge).
    case unauthorized
    /// A login without the role the route needs; the same code, and the same status, as
    /// `ErrorCode.notAllowed`.
    case notAllowed = "not_allowed"
    /// A change (a method other than GET and HEAD) from another site's page
    /// (`Sec-Fetch-Site: cross-site`).
    case crossSite = "cross_site"
    /// Without logins, a `Host` that is not a loopback name (DNS rebinding).
    case misdirectedHost = "misdirected_host"
    /// A body the console reads that is not declared JSON (`Content-Type`).
    case unsupportedMediaType = "unsupported_media_type"

    // A request's framing and size (`RequestLimits`, `HTTPServer`, `LibraryRefusal`).
    /// `Content-Length` or `Transfer-Encoding` more than once, a `Transfer-Encoding` other
    /// than `chunked`, a `Content-Length` that is not a byte count; or a request
    /// libmicrohttpd cannot parse.
    case badRequest = "bad_request"
    /// An HTTP/1.1 request without `Host`, a request with more than one `Host` line, or
    /// one whose `Host` is not a host with an optional port (RFC 9112 §3.2: `HostHeader`).
    case badHost = "bad_host"
    /// A path or query argument holding an ASCII control character (`%00`, `%0A`) or bytes
    /// that are not UTF-8 (`%FF`), escaped or raw (`PercentDecoding`).
    case badURI = "bad_uri"
    /// A chunked body: only a body with `Content-Length` is accepted.
    case lengthRequired = "length_required"
    /// A body larger than `maximumBodyBytes`, announced or arriving; the same code, and
    /// the same status, as `ErrorCode.payloadTooLarge`.
    case payloadTooLarge = "payload_too_large"
    /// libmicrohttpd's own: a request line longer than the connection's memory.
    case uriTooLong = "uri_too_long"
    /// libmicrohttpd's own: a header larger than the connection's memory.
    case headerTooLarge = "header_too_large"
    /// libmicrohttpd's own: an `Expect` it does not meet.
    case expectationFailed = "expectation_failed"
    /// libmicrohttpd's own: a failure inside it.
    case internalError = "internal_error"
    /// libmicrohttpd's own: a request using something it does not implement.
    case notImplemented = "not_implemented"
    /// libmicrohttpd's own: an HTTP version it does not speak.
    case httpVersionNotSupported = "http_version_not_supported"

    // Time.
    /// A header not complete within `headerTimeout` (slowloris); the socket is shut.
    case headerTimeout = "header_timeout"
    /// A body not complete within `headerTimeout` once its header was in; the socket is
    /// shut.
    case requestTimeout = "request_timeout"
    /// A handler that did not answer within `replyTimeout`.
    case timeout

    // Load.
    /// A request that came, or was still waiting for its answer, while the server stops.
    case shuttingDown = "shutting_down"
    /// More than `maximumConnections` open.
    case tooManyConnections = "too_many_connections"
    /// A user with `Console.maximumUnsentAnswers` large answers (or live streams'
    /// openings) still unsent (`UnsentAnswers`).
    case tooManyUnread = "too_many_unread"
    /// As many pages following live updates as the stream takes.
    case tooManyStreams = "too_many_streams"
    /// A live stream whose client fell too far behind, closed: counted only, never
    /// answered (its 200 went out when it opened), so it has no `status`.
    case tooFarBehind = "too_far_behind"

    /// The status a refusal with this code is answered with; nil for `tooFarBehind`, which
    /// is counted but never answered.
    package var status: Int? {
        switch self {
        case .badRequest, .badHost, .badURI: 400
        case .unauthorized: 401
        case .notAllowed, .crossSite: 403
        case .notFound: 404
        case .methodNotAllowed: 405
        case .headerTimeout, .requestTimeout: 408
        case .lengthRequired: 411
        case .payloadTooLarge: 413
        case .uriTooLong: 414
        case .unsupportedMediaType: 415
        case .expectationFailed: 417
        case .misdirectedHost: 421
        case .tooManyUnread: 429
        case .headerTooLarge: 431
        case .internalError: 500
        case .notImplemented: 501
        case .shuttingDown, .tooManyConnections, .tooManyStreams: 503
        case .timeout: 504
        case .httpVersionNotSupported: 505
        case .tooFarBehind: nil
        }
    }

    /// The counter this code's refusals are counted under: `http_refused.<code>`.
    package var counter: String {
        HTTPRefusalCode.counter(for: rawValue)
    }

    /// The counter for refusals with the wire code `code`: one of these, a domain code the
    /// console passes through (`RefusalCode`: `http_refused.invalid_json`), or a status
    /// libmicrohttpd refuses with by itself that has no code (`LibraryRefusal`).
    package static func counter(for code: String) -> String {
        "http_refused.\(code)"
    }
}
