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

/// Why an attempt got no usable answer.
package struct TransportFailure: Sendable, Equatable {
    /// Whether trying again can help: a refused login, an unsupported URL or a server
    /// that will not do STARTTLS stay that way; a timeout or a refused connection may not.
    package var permanent: Bool
    /// The last reply code of the protocol (an SMTP 550, say), 0 when none came.
    package var reply: Int
    /// The transport's explanation.
    package var message: String

    package init(permanent: Bool, reply: Int, message: String) {
        self.permanent = permanent
        self.reply = reply
        self.message = message
    }
}
