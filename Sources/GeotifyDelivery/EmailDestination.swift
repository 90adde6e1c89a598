import Foundation

/// An `email` target: a plain-text e-mail over SMTP, through `smtps://` (TLS from the
/// start) or `smtp://` with STARTTLS required, logging in when a user name is set.
///
/// The message is UTF-8: the subject as RFC 2047 encoded words when it is not plain ASCII,
/// the body base64-encoded, so no server can mangle it. Its `Message-ID` is derived from
/// the target and the event id, so every attempt carries the same one and mail systems
/// can drop a repeat, as webhook receivers do with the idempotency key.
package struct EmailDestination: Sendable, Equatable {
    /// `smtp://HOST:PORT` or `smtps://HOST:PORT`.
    package var url: String
    package var security: MailMessage.Security
    package var username: String?
    package var password: Secret?
    package var from: String
    package var to: [String]

    package init(url: String, security: MailMessage.Security, username: String?, password: Secret?, from: String, to: [String]) {
        self.url = url
        self.security = security
        self.username = username
        self.password = password
        self.from = from
        self.to = to
    }

    /// The e-mail of `content` about `event` for the target `target`, dated `now`.
    package func message(for content: MessageContent, event: DeliveryEvent, target: String, at now: Double) -> MailMessage {
        let identity = Digest.sha256(Array("\(target)\n\(event.id)".utf8)).map { Digest.hex(Array($0.prefix(16))) }
            ?? HTTPRequest.headerValue(event.id)
        let lines = [
            "Date: \(CalendarTime(seconds: now).rfc5322)",
            "From: <\(from)>",
            "To: " + to.map { "<\($0)>" }.joined(separator: ", "),
            "Subject: \(EmailDestination.encodedHeader(content.title))",
            "Message-ID: <\(identity).\(target)@geotify>",
            "MIME-Version: 1.0",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Transfer-Encoding: base64",
            "",
        ] + EmailDestination.base64Lines(Array(content.body.utf8))
        return MailMessage(
            url: url, security: security, username: username, password: password, from: from, recipients: to,
            data: Array((lines.joined(separator: "\r\n") + "\r\n").utf8))
    }

    /// A header value: line breaks become spaces (no header can be injected), plain ASCII
    /// stays as it is, anything else becomes RFC 2047 encoded words of whole characters,
    /// each under 76 characters, folded onto continuation lines.
    static func encodedHeader(_ text: String) -> String {
        let flat = String(text.map { $0.isNewline ? " " : $0 }.prefix(200))
        if flat.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) { return flat }
        var words: [String] = []
        var chunk: [UInt8] = []
        for character in flat {
            let bytes = Array(String(character).utf8)
            if !chunk.isEmpty, chunk.count + bytes.count > 45 {
                words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
                chunk = []
            }
            chunk += bytes
        }
        words.append("=?UTF-8?B?\(Data(chunk).base64EncodedString())?=")
        return words.joined(separator: "\r\n ")
    }

    /// `bytes` in base64, 76 characters a line.
    static func base64Lines(_ bytes: [UInt8]) -> [String] {
        let encoded = Data(bytes).base64EncodedString()
        var lines: [String] = []
        var index = encoded.startIndex
        while index < encoded.endIndex {
            let end = encoded.index(index, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[index..<end]))
            index = end
        }
        return lines
    }
}
