/// An e-mail an `email` target is sent over SMTP: the envelope, the server and how to
/// reach it, and the message itself (RFC 5322, CRLF line ends).
package struct MailMessage: Sendable, Equatable {
    /// How the connection to the server is protected.
    package enum Security: String, Sendable, Equatable {
        /// `smtps://`: TLS from the first byte.
        case implicitTLS
        /// `smtp://` upgraded with STARTTLS; a server that does not offer it is refused.
        case startTLS
        /// `smtp://` in the clear, for a relay on the same host; never with a password.
        case none
    }

    /// `smtp://HOST:PORT` or `smtps://HOST:PORT`.
    package var url: String
    package var security: Security
    package var username: String?
    package var password: Secret?
    /// The envelope sender (`MAIL FROM`).
    package var from: String
    /// The envelope recipients (`RCPT TO`).
    package var recipients: [String]
    /// The message: headers, a blank line, the body.
    package var data: [UInt8]

    package init(url: String, security: Security, username: String?, password: Secret?, from: String, recipients: [String], data: [UInt8]) {
        self.url = url
        self.security = security
        self.username = username
        self.password = password
        self.from = from
        self.recipients = recipients
        self.data = data
    }
}
