/// Finds the route for a request's method and path: the first route whose pattern fits
/// and whose method is the request's (`HEAD` is served by a `GET` route), or why none is.
///
/// Pure: the same table and path give the same answer, so routing is tested without a
/// server.
package struct Router: Sendable {
    /// What routing a request found.
    package enum Routing: Sendable {
        case found(Route, captures: [String: String])
        /// The path exists, not with this method: 405 with `Allow`.
        case methodNotAllowed(allowed: [String])
        case notFound
    }

    package let routes: [Route]

    package init(_ routes: [Route]) {
        self.routes = routes
    }

    /// The route for `method` and `path` (already without the base path).
    package func route(_ method: String, _ path: String) -> Routing {
        let segments = path.split(separator: "/")
        var allowed: [String] = []
        for route in routes {
            guard let captures = route.match(segments) else { continue }
            if route.method == method || (method == "HEAD" && route.method == "GET") {
                return .found(route, captures: captures)
            }
            allowed.append(route.method)
            if route.method == "GET" { allowed.append("HEAD") }
        }
        if allowed.isEmpty { return .notFound }
        var seen = Set<String>()
        return .methodNotAllowed(allowed: allowed.filter { seen.insert($0).inserted })
    }
}
