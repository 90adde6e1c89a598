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
