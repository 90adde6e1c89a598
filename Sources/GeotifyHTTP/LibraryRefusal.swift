/// A request libmicrohttpd answered by itself, before the server saw it: a request line
/// longer than the connection's memory (414), a header too large for it (431), a request
/// it cannot parse (400) and the like, read from the line it logs for each
/// ("Error processing request (HTTP response code is 431 ('...')). Closing connection.").
///
/// libmicrohttpd calls no handler for these and sends its own short HTML page (0.9.75 has
/// no way to change that body), so its log line is the one place the server learns of
/// them; the server counts each as a refusal under `counter`, as it counts its own.
package struct LibraryRefusal: Sendable, Equatable {
    package var status: Int
    /// The refusal's code, as the server's own refusals name theirs; nil for a status
    /// libmicrohttpd is not known to refuse with (`counter` names it by its number).
    package var code: HTTPRefusalCode?

    package init(status: Int, code: HTTPRefusalCode?) {
        self.status = status
        self.code = code
    }

    /// The refusal a libmicrohttpd log line reports; nil for any other line.
    package init?(logLine line: String) {
        guard line.hasPrefix("Error processing request"),
              let marker = line.range(of: "HTTP response code is ") else { return nil }
        guard let status = Int(line[marker.upperBound...].prefix(while: \.isNumber)) else { return nil }
        self.status = status
        code = switch status {
        case 400: .badRequest
        case 413: .payloadTooLarge
        case 414: .uriTooLong
        case 417: .expectationFailed
        case 431: .headerTooLarge
        case 500: .internalError
        case 501: .notImplemented
        case 505: .httpVersionNotSupported
        default: nil
        }
    }

    /// The counter it is counted under: its code's, else `http_refused.refused_<status>`.
    package var counter: String {
        code?.counter ?? HTTPRefusalCode.counter(for: "refused_\(status)")
    }
}
