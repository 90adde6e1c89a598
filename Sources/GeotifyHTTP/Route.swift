/// One endpoint: the method and path pattern it answers, who may use it, and the handler.
///
/// A pattern is a path whose segments are literals, `{name}` (one segment, captured) or a
/// final `{name...}` (the rest of the path, one or more segments, captured with its
/// slashes: `/api/cmd/{device...}` takes `alice/phone` as it takes an MQTT topic's
/// device levels).
package struct Route: Sendable {
    /// Who may call a route.
    package enum Access: Sendable, Equatable {
        /// Anyone, logged in or not (`/healthz`).
        case open
        /// A logged-in user with the role.
        case role(Role)
    }

    /// The handler: the request, the captured path parts and the user; it answers through
    /// the responder, at once or later from any thread.
    package typealias Handler = @Sendable (_ request: HTTPRequest, _ captures: [String: String], _ user: HTTPUser, _ responder: HTTPResponder) -> Void

    package var method: String
    package var pattern: String
    package var access: Access
    package var handler: Handler
    let segments: [Segment]

    /// One segment of a pattern.
    enum Segment: Equatable {
        case literal(String)
        case capture(String)
        case rest(String)
    }

    package init(_ method: String, _ pattern: String, access: Access, handler: @escaping Handler) {
        self.method = method
        self.pattern = pattern
        self.access = access
        self.handler = handler
        segments = pattern.split(separator: "/").map { part in
            if part.hasPrefix("{") && part.hasSuffix("...}") { return .rest(String(part.dropFirst().dropLast(4))) }
            if part.hasPrefix("{") && part.hasSuffix("}") { return .capture(String(part.dropFirst().dropLast())) }
            return .literal(String(part))
        }
    }

    /// The captures when `path`'s segments fit the pattern; nil when they do not.
    func match(_ path: [Substring]) -> [String: String]? {
        var captures: [String: String] = [:]
        var index = 0
        for segment in segments {
            switch segment {
            case .literal(let literal):
                guard index < path.count, path[index] == literal else { return nil }
            case .capture(let name):
                guard index < path.count else { return nil }
                captures[name] = String(path[index])
            case .rest(let name):
                guard index < path.count else { return nil }
                captures[name] = path[index...].joined(separator: "/")
                return captures
            }
            index += 1
        }
        return index == path.count ? captures : nil
    }
}
