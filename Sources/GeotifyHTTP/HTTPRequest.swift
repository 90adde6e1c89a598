/// One HTTP request as a handler sees it: the method, the path with the site's base path
/// taken off, the query, the header fields and the whole body.
///
/// A value, so routing, access decisions and handlers are tested by building one in code
/// without a socket. The server fills it in once the body is complete (and within the
/// size limit), so handlers never see a partial request.
package struct HTTPRequest: Sendable, Equatable {
    /// `GET`, `POST`, ... as sent (methods are case-sensitive).
    package var method: String
    /// The percent-decoded path, always starting with `/`.
    package var path: String
    /// The query parameters, percent-decoded; the last of a repeated name wins.
    package var query: [String: String]
    /// The header fields by lower-cased name; the last of a repeated field wins.
    package var headers: [String: String]
    package var body: [UInt8]

    package init(
        method: String, path: String, query: [String: String] = [:], headers: [String: String] = [:], body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
        self.body = body
    }

    /// The header field `name` (any case).
    package func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    /// The media type of the body without parameters, lower-cased: `application/json`
    /// for `Content-Type: application/json; charset=utf-8`.
    package var mediaType: String? {
        guard let value = header("content-type") else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        return type.trimmingSpaces.lowercased()
    }

    /// The path's segments, without empty ones: `/api/cmd/alice/phone` is
    /// `["api", "cmd", "alice", "phone"]`.
    package var segments: [Substring] {
        path.split(separator: "/")
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs (HTTP's optional white space).
    var trimmingSpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
