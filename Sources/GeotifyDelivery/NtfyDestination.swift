import Foundation
import GeotifyJSON

/// An `ntfy` target: a message published to a topic of an ntfy server (ntfy.sh or one's
/// own), as JSON POSTed to the server's root URL (ntfy's "publish as JSON"), which carries
/// a UTF-8 title where headers could not. A protected topic takes an access token
/// (`Authorization: Bearer tk_...`) or a user name and password (Basic).
package struct NtfyDestination: Sendable, Equatable {
    /// The server's root URL, `https://ntfy.sh` by default.
    package var url: String
    package var topic: String
    package var token: Secret?
    package var username: String?
    package var password: Secret?
    /// 1 (min) to 5 (max); the server's default (3) when nil.
    package var priority: Int?
    /// Tags, which ntfy shows as emojis when they name one (`round_pushpin`).
    package var tags: [String]

    package init(url: String, topic: String, token: Secret?, username: String?, password: Secret?, priority: Int?, tags: [String]) {
        self.url = url
        self.topic = topic
        self.token = token
        self.username = username
        self.password = password
        self.priority = priority
        self.tags = tags
    }

    /// The Basic credential, base64 of `username:password`, when both are set.
    package var basicCredential: String? {
        guard let username, let password else { return nil }
        return Data("\(username):\(password.value)".utf8).base64EncodedString()
    }

    package func request(for content: MessageContent) -> HTTPRequest {
        var message = JSONObject()
        message["topic"] = .string(topic)
        message["title"] = .string(content.title)
        message["message"] = .string(content.body)
        if let priority { message["priority"] = .number(Double(priority)) }
        if !tags.isEmpty { message["tags"] = .array(tags.map { .string($0) }) }
        var headers: [HTTPRequest.Header] = [.init("Content-Type", "application/json")]
        if let token {
            headers.append(.init("Authorization", "Bearer \(token.value)"))
        } else if let basicCredential {
            headers.append(.init("Authorization", "Basic " + basicCredential))
        }
        let root = url.hasSuffix("/") ? url : url + "/"
        return HTTPRequest(url: root, headers: headers, body: JSONWriter().bytes(.object(message)))
    }
}
