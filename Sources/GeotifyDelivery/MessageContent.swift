/// The title and body of a push or e-mail, rendered from the target's templates.
package struct MessageContent: Sendable, Equatable {
    package var title: String
    /// Never empty: when the body template gives nothing (a fence without a note), the
    /// body is the title, since every service needs some text.
    package var body: String

    package init(title: String, body: String) {
        self.title = title
        self.body = body.isEmpty ? title : body
    }

    /// Title and body as one text, for services without a title (Telegram): the title on
    /// its own line above the body, or the body alone when it is the title.
    package var combined: String {
        body == title || title.isEmpty ? body : "\(title)\n\(body)"
    }

    /// `text` cut to at most `limit` characters, ending in "…" when cut: the services
    /// refuse longer texts.
    package static func truncated(_ text: String, to limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }
}
