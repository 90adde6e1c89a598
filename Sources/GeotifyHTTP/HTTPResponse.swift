import GeotifyCore
import GeotifyJSON

/// An answer to a request: the status, header fields and a body, which is either bytes
/// or a live event stream that stays open.
///
/// Every refusal is a response too, with the same JSON shape as a Geotify MQTT reply's
/// error (`{"ok": false, "error": {"code": ..., "message": ...}}`), so a client reads
/// errors one way whichever door it came in by.
package struct HTTPResponse: Sendable {
    /// What follows the header.
    package enum Body: Sendable {
        /// Bytes as an array, copied into a `HeldBody` when the response is queued.
        case bytes([UInt8])
        /// Bytes a producer wrote straight into memory of their own, sent from there.
        case held(HeldBody)
        /// A Server-Sent Events stream; the connection stays open until the stream or the
        /// client closes it.
        case events(EventSubscription)
    }

    package var status: Int
    /// Header fields by name as sent (one value each).
    package var headers: [String: String]
    package var body: Body
    /// The error code when this is a refusal (`refusal(_:_:)`, `refusal(status:domainCode:_:)`,
    /// or a command's reply with an error), for counting.
    package var refusalCode: RefusalCode?
    /// Kept alive as long as the server holds the response: until it has been sent whole
    /// or its connection closed. What an application that bounds its unsent answers
    /// counts by (the object's `deinit` says the answer is done).
    package var lease: (any AnyObject & Sendable)?

    package init(status: Int, headers: [String: String] = [:], body: Body = .bytes([]), refusalCode: RefusalCode? = nil) {
        self.status = status
        self.headers = headers
        self.body = body
        self.refusalCode = refusalCode
    }

    /// The body's bytes; empty for an event stream.
    package var bytes: [UInt8] {
        switch body {
        case .bytes(let bytes): bytes
        case .held(let held): held.bytes
        case .events: []
        }
    }

    /// A JSON document.
    package static func json(_ value: JSON, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: .bytes(JSONWriter().bytes(value)))
    }

    /// Plain text (a line break is added when missing).
    package static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        let line = text.hasSuffix("\n") ? text : text + "\n"
        return HTTPResponse(status: status, headers: ["Content-Type": contentType], body: .bytes(Array(line.utf8)))
    }

    /// One of the HTTP layer's own refusals: `code`'s status with
    /// `{"ok": false, "error": {"code": code, "message": message}}`. `code` must have a
    /// status (every one but `tooFarBehind`, which is counted, never answered).
    package static func refusal(_ code: HTTPRefusalCode, _ message: String) -> HTTPResponse {
        guard let status = code.status else { preconditionFailure("\(code.rawValue) is counted, never answered") }
        return refused(status, .http(code), message)
    }

    /// A refusal with a code the HTTP layer does not own: the bridge's error codes
    /// (`ErrorCode`), which the console passes through with the status it gives each.
    /// Such a code is never one of `HTTPRefusalCode`'s with another meaning (tested); the
    /// two that are shared, `not_allowed` and `payload_too_large`, have the same status.
    package static func refusal(status: Int, domainCode: ErrorCode, _ message: String) -> HTTPResponse {
        assert(
            HTTPRefusalCode(rawValue: domainCode.rawValue).map { $0.status == status } ?? true,
            "\(domainCode.rawValue) is an HTTP refusal with another status")
        return refused(status, .domain(domainCode), message)
    }

    private static func refused(_ status: Int, _ code: RefusalCode, _ message: String) -> HTTPResponse {
        var response = HTTPResponse.json(["ok": false, "error": ["code": .string(code.rawValue), "message": .string(message)]], status: status)
        response.refusalCode = code
        return response
    }

    /// The counter this response is counted under as a refusal (`http_refused.<code>`);
    /// nil when it is not one.
    package var refusalCounter: String? {
        refusalCode?.counter
    }
}
