import GeotifyJSON

/// A `gotify` target: a message POSTed to `<server>/message` of a Gotify server with an
/// application token in `X-Gotify-Key`, as Gotify's push-message documentation shows.
package struct GotifyDestination: Sendable, Equatable {
    /// The server's root URL.
    package var url: String
    /// The application token.
    package var token: Secret
    /// 0 to 10; the application's default when nil.
    package var priority: Int?

    package init(url: String, token: Secret, priority: Int?) {
        self.url = url
        self.token = token
        self.priority = priority
    }

    package func request(for content: MessageContent) -> HTTPRequest {
        var message = JSONObject()
        message["title"] = .string(content.title)
        message["message"] = .string(content.body)
        if let priority { message["priority"] = .number(Double(priority)) }
        let endpoint = (url.hasSuffix("/") ? String(url.dropLast()) : url) + "/message"
        return HTTPRequest(url: endpoint, headers: [
            .init("Content-Type", "application/json"),
            .init("X-Gotify-Key", token.value),
        ], body: JSONWriter().bytes(.object(message)))
    }
}
