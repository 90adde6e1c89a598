/// The size rules a request must meet before its body is read, decided from its header
/// alone so an oversized upload is refused before a byte of it is stored.
///
/// A body must come with exactly one `Content-Length` (a chunked upload is refused with
/// 411, as its size is unknown until it ends), no larger than `maximumBodyBytes` (413).
/// A `Content-Length` or `Transfer-Encoding` given more than once, or a
/// `Transfer-Encoding` other than `chunked`, is refused with 400: libmicrohttpd reads the
/// body by the first copy, or until the connection closes, so a second copy or an
/// unknown coding would hide the body's real size. Header size is enforced by
/// libmicrohttpd itself (431 and 414) through its per-connection memory limit. The body
/// is also capped as it arrives (`BodyBuffer`), whatever the header said.
package struct RequestLimits: Sendable, Equatable {
    /// The largest body accepted, in bytes.
    package var maximumBodyBytes: Int

    package init(maximumBodyBytes: Int) {
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// The refusal for a request with these header fields (every copy of each, in the
    /// order sent), or nil when it may proceed.
    package func refusal(contentLengths: [String], transferEncodings: [String]) -> HTTPResponse? {
        if contentLengths.count > 1 {
            return .refusal(.badRequest, "the request has \(contentLengths.count) Content-Length fields; send one")
        }
        if transferEncodings.count > 1 {
            return .refusal(.badRequest, "the request has \(transferEncodings.count) Transfer-Encoding fields; send the body with one Content-Length")
        }
        if let transferEncoding = transferEncodings.first {
            guard transferEncoding.trimmingSpaces.lowercased() == "chunked" else {
                return .refusal(.badRequest, "Transfer-Encoding \"\(transferEncoding)\" is not accepted; send the body with a Content-Length")
            }
            return .refusal(.lengthRequired, "send the body with a Content-Length (Transfer-Encoding chunked is not accepted)")
        }
        guard let contentLength = contentLengths.first else { return nil }
        guard let length = Int(contentLength.trimmingSpaces), length >= 0 else {
            return .refusal(.badRequest, "Content-Length \"\(contentLength)\" is not a byte count")
        }
        if length > maximumBodyBytes {
            return .refusal(.payloadTooLarge, "the body is \(length) bytes; at most \(maximumBodyBytes) are accepted")
        }
        return nil
    }
}
