/// The size rules a request must meet before its body is read, decided from its header
/// alone so an oversized upload is refused before a byte of it is stored.
///
/// A body must come with a `Content-Length` (a chunked upload is refused with 411, as
/// its size is unknown until it ends), no larger than `maximumBodyBytes` (413). Header
/// size is enforced by libmicrohttpd itself (431 and 414) through its per-connection
/// memory limit.
package struct RequestLimits: Sendable, Equatable {
    /// The largest body accepted, in bytes.
    package var maximumBodyBytes: Int

    package init(maximumBodyBytes: Int) {
        self.maximumBodyBytes = maximumBodyBytes
    }

    /// The refusal for a request with these header fields, or nil when it may proceed.
    package func refusal(contentLength: String?, transferEncoding: String?) -> HTTPResponse? {
        if let transferEncoding, !transferEncoding.isEmpty, transferEncoding.lowercased() != "identity" {
            return .refusal(411, "length_required", "send the body with a Content-Length (Transfer-Encoding \(transferEncoding) is not accepted)")
        }
        guard let contentLength else { return nil }
        guard let length = Int(contentLength.trimmingSpaces), length >= 0 else {
            return .refusal(400, "bad_request", "Content-Length \"\(contentLength)\" is not a byte count")
        }
        if length > maximumBodyBytes {
            return .refusal(413, "payload_too_large", "the body is \(length) bytes; at most \(maximumBodyBytes) are accepted")
        }
        return nil
    }
}
