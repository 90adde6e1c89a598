import Foundation
/// How one attempt ended, as the retry schedule needs it: delivered, failed for now
/// (retry, no sooner than `retryAfter` seconds when the service said so), or refused for
/// good (a 4xx such as a wrong token: dead-lettered at once, as Pushover asks, since
/// retrying the same request cannot succeed).
package enum AttemptOutcome: Sendable, Equatable {
    case delivered(answer: String)
    case failed(reason: String, retryAfter: Double?)
    case rejected(reason: String)

    /// The usual reading of an answer: HTTP 2xx is delivered; 408, 409, 425, 429 and 5xx
    /// are worth retrying, after `Retry-After` when given; any other status (a 3xx is not
    /// followed: a POST must not be replayed elsewhere) is refused. An SMTP server that
    /// took the message delivered it; transport failures are as permanent as they say,
    /// and an SMTP 5xx reply is permanent too.
    /// `redaction` is applied to the body before it is cut to its excerpt.
    package init(_ response: TransportResponse, now: Double, redaction: Redaction = .none) {
        switch response {
        case .http(let status, let retryAfter, let body):
            let answer = "HTTP \(status)" + AttemptOutcome.excerpt(body, redaction: redaction).map { ": \($0)" }.orEmpty
            if (200..<300).contains(status) {
                self = .delivered(answer: answer)
            } else if [408, 409, 425, 429].contains(status) || (500..<600).contains(status) {
                self = .failed(reason: answer, retryAfter: retryAfter.flatMap { RetryAfter.seconds($0, now: now) })
            } else {
                self = .rejected(reason: answer)
            }
        case .mail(let reply):
            self = .delivered(answer: "SMTP \(reply)")
        case .failed(let failure):
            let reason = failure.reply > 0 ? "\(failure.message) (last reply \(failure.reply))" : failure.message
            if failure.permanent || failure.reply >= 500 {
                self = .rejected(reason: reason)
            } else {
                self = .failed(reason: reason, retryAfter: nil)
            }
        }
    }

    /// The text of the outcome, for logs, `notify test` and the last error.
    package var text: String {
        switch self {
        case .delivered(let answer): answer
        case .failed(let reason, _): reason
        case .rejected(let reason): reason
        }
    }

    /// The outcome with `redact` applied to its text (to blank out secrets).
    package func redacted(_ redact: (String) -> String) -> AttemptOutcome {
        switch self {
        case .delivered(let answer): .delivered(answer: redact(answer))
        case .failed(let reason, let retryAfter): .failed(reason: redact(reason), retryAfter: retryAfter)
        case .rejected(let reason): .rejected(reason: redact(reason))
        }
    }

    /// The most characters of a response body an outcome keeps.
    package static let excerptLength = 300

    /// The start of `body` as one line of text (control characters as spaces), ending in
    /// "…" when there was more, or nil when it is blank; with `redaction` applied before
    /// it is cut: enough of the body is read for a form that starts within the excerpt to
    /// be read whole, and the part of a form a cut leaves at the end is blanked too.
    package static func excerpt(_ body: [UInt8], redaction: Redaction = .none) -> String? {
        var end = min(body.count, excerptLength * 4 + redaction.longestUTF8)
        while end < body.count, end > 0, body[end] & 0xC0 == 0x80 { end -= 1 }  // at a character's start
        let redaction = redaction.mapped(oneLine)
        var text = redaction.apply(oneLine(String(decoding: body[..<end], as: UTF8.self)))
        if end < body.count { text = redaction.blankingCutEnd(text) }
        let line = text.trimmingCharacters(in: .whitespaces)
        // A body read only in part is marked cut even when what was read is short or blank
        // (a page indented with a thousand spaces).
        let cut = end < body.count ? "…" : ""
        guard !line.isEmpty else { return cut.isEmpty ? nil : cut }
        guard line.count > excerptLength else { return line + cut }
        // Every form starting within the excerpt was read whole and blanked: the cut here
        // leaves no part of a secret, and what it leaves is not blanked as if it were one.
        return String(line.prefix(excerptLength)) + "…"
    }

    /// `text` with control characters as spaces.
    private static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
    }
}

extension Optional where Wrapped == String {
    /// The string, or "" when nil.
    fileprivate var orEmpty: String { self ?? "" }
}
