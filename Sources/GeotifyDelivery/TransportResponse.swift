/// What the transport got back from one attempt: the service's answer, or why there was
/// none. Reading it as delivered, retry or give up is the destination's (`AttemptOutcome`).
package enum TransportResponse: Sendable, Equatable {
    /// An HTTP response: status, the `Retry-After` header if sent, and the body (at most
    /// `CurlTransport.maximumBody` bytes).
    case http(status: Int, retryAfter: String?, body: [UInt8])
    /// The SMTP server accepted the message; the code of its last reply.
    case mail(reply: Int)
    /// No usable answer: the connection, TLS or the protocol failed.
    case failed(TransportFailure)
}
