import GeotifyJSON

/// A `telegram` target: the Bot API's `sendMessage` (POST
/// `https://api.telegram.org/bot<token>/sendMessage`, JSON) to a chat. Telegram has no
/// title, so the title is the first line of the text; texts over 4096 characters are cut.
/// Flood control answers 429 with `parameters.retry_after`, which is honoured.
package struct TelegramDestination: Sendable, Equatable {
    /// `https://api.telegram.org` unless the settings say otherwise (a local Bot API server).
    package var url: String
    /// The bot's token; it is part of the URL path, so the URL is never logged.
    package var token: Secret
    /// The chat: a numeric id or `@channelusername`.
    package var chat: JSON
    /// Send without sound.
    package var silent: Bool

    package static let defaultURL = "https://api.telegram.org"
    package static let textLimit = 4096

    package init(url: String, token: Secret, chat: JSON, silent: Bool) {
        self.url = url
        self.token = token
        self.chat = chat
        self.silent = silent
    }

    package func request(for content: MessageContent) -> HTTPRequest {
        var message = JSONObject()
        message["chat_id"] = chat
        message["text"] = .string(MessageContent.truncated(content.combined, to: TelegramDestination.textLimit))
        if silent { message["disable_notification"] = .bool(true) }
        let base = url.hasSuffix("/") ? String(url.dropLast()) : url
        return HTTPRequest(
            url: "\(base)/bot\(token.value)/sendMessage",
            headers: [.init("Content-Type", "application/json")],
            body: JSONWriter().bytes(.object(message)))
    }

    /// The usual reading, with what the Bot API says in its body: the `description` of a
    /// refusal (as an excerpt: one line, at most `AttemptOutcome.excerptLength`
    /// characters), and the `retry_after` of flood control; `redaction` as for
    /// `AttemptOutcome`.
    package func outcome(of response: TransportResponse, now: Double, redaction: Redaction = .none) -> AttemptOutcome {
        let outcome = AttemptOutcome(response, now: now, redaction: redaction)
        guard case .http(let status, _, let body) = response, !(200..<300).contains(status),
              let answer = try? JSONParser().parse(body), answer["ok"]?.boolValue == false
        else { return outcome }
        // Cut and made one line as any answer is, its secrets blanked first.
        let description = answer["description"]?.stringValue.flatMap { AttemptOutcome.excerpt(Array($0.utf8), redaction: redaction) }
        let reason = "HTTP \(status): " + (description ?? "no description")
        switch outcome {
        case .failed(_, let retryAfter):
            let asked = answer["parameters"]?["retry_after"]?.numberValue.map { max(0, min($0, RetryAfter.longest)) }
            return .failed(reason: reason, retryAfter: asked ?? retryAfter)
        case .rejected:
            return .rejected(reason: reason)
        case .delivered:
            return outcome
        }
    }
}
