/// The site in front of the handlers: takes the base path off, finds the route, checks
/// who is asking and whether they may, refuses cross-site changes, and calls the route's
/// handler. Everything a request meets before a handler, in one place.
///
/// With no `authenticator` nobody logs in and everyone holds every role; the settings
/// allow that only on a loopback address, and then only requests naming a loopback host
/// (`localhost`, `127.0.0.1`, `[::1]`, any port) are served: a page on another site
/// whose name was made to resolve to 127.0.0.1 (DNS rebinding) sends its own name and is
/// refused with 421 `misdirected_host`. A `Host` given twice or malformed never gets here
/// from the server: `HostHeader` refuses it with 400 `bad_host` first.
package struct HTTPApplication: Sendable {
    package let router: Router
    package let basePath: BasePath
    package let authenticator: Authenticator?
    /// The realm browsers show in their login dialog.
    package let realm: String

    package init(router: Router, basePath: BasePath, authenticator: Authenticator?, realm: String = "Geotify") {
        self.router = router
        self.basePath = basePath
        self.authenticator = authenticator
        self.realm = realm
    }

    /// What a request leads to before any handler runs.
    package enum Decision: Sendable {
        /// Answer with this (a redirect or a refusal).
        case respond(HTTPResponse)
        /// Call the route's handler with the request (base path taken off) and the user.
        case call(Route, HTTPRequest, captures: [String: String], user: HTTPUser)
    }

    /// Decides what `request` leads to.
    package func decide(_ request: HTTPRequest) -> Decision {
        if authenticator == nil, let host = request.header("host"), !HTTPApplication.isLoopback(host: host) {
            return .respond(.refusal(
                .misdirectedHost,
                "without logins only a loopback host is served (localhost, 127.0.0.1 or [::1]); \"\(host)\" is not one"))
        }
        var request = request
        switch basePath.resolve(request.path) {
        case .redirect(let location):
            return .respond(HTTPResponse(status: 308, headers: ["Location": location]))
        case .serve(let path):
            request.path = path
        }
        let route: Route
        let captures: [String: String]
        switch router.route(request.method, request.path) {
        case .notFound:
            return .respond(.refusal(.notFound, "nothing here; the map is at \(basePath.prefix)/"))
        case .methodNotAllowed(let allowed):
            var response = HTTPResponse.refusal(.methodNotAllowed, "\(request.method) is not allowed here; use \(allowed.joined(separator: " or "))")
            response.headers["Allow"] = allowed.joined(separator: ", ")
            return .respond(response)
        case .found(let found, let foundCaptures):
            route = found
            captures = foundCaptures
        }
        let user: HTTPUser
        switch route.access {
        case .open:
            user = HTTPUser(name: nil, roles: [])
        case .role(let role):
            if let authenticator {
                switch authenticator.authenticate(request.header("authorization")) {
                case .failure(let failure):
                    return .respond(unauthorized(failure))
                case .success(let found):
                    user = found
                }
            } else {
                user = .anonymous
            }
            guard user.has(role) else {
                return .respond(.refusal(.notAllowed, "user \"\(user.name ?? "")\" does not have the role \"\(role.rawValue)\" this needs"))
            }
        }
        if !["GET", "HEAD"].contains(request.method), request.header("sec-fetch-site") == "cross-site" {
            return .respond(.refusal(.crossSite, "changes are not accepted from another site's page"))
        }
        return .call(route, request, captures: captures, user: user)
    }

    /// What a request's header leads to, before its body is read: a refusal (no route, no
    /// login, no role) is answered at once, so a body nobody may send is never stored;
    /// otherwise the route's handler, given the complete request with its body. The
    /// login is checked here, once per request.
    package func admit(_ head: HTTPRequest) -> HTTPServer.Admission {
        switch decide(head) {
        case .respond(let response):
            return .refuse(response)
        case .call(let route, let decided, let captures, let user):
            return .proceed { request, responder in
                var complete = decided
                complete.body = request.body
                route.handler(complete, captures, user, responder)
            }
        }
    }

    /// Handles `request`, answering through `responder`: the server's path in one call
    /// (`admit` on the header, then the admitted handler on the whole request), for
    /// callers that hold a complete request (the tests).
    package func handle(_ request: HTTPRequest, _ responder: HTTPResponder) {
        switch admit(request) {
        case .refuse(let response):
            responder.send(response)
        case .proceed(let handler):
            handler(request, responder)
        }
    }

    /// Whether a `Host` header names the loopback: `localhost`, an IPv4 address in
    /// 127.0.0.0/8 or `[::1]`, each with or without a port. A name that merely resolves to
    /// 127.0.0.1 is not: that is what a DNS rebinding attack uses.
    package static func isLoopback(host: String) -> Bool {
        let value = Substring(host.trimmingSpaces.lowercased())
        func digits(_ text: Substring, atMost: Int) -> Bool {
            !text.isEmpty && text.count <= atMost && text.allSatisfy { ("0"..."9").contains($0) }
        }
        let name: Substring
        let port: Substring
        if value.hasPrefix("[") {
            guard let close = value.firstIndex(of: "]") else { return false }
            name = value[...close]
            port = value[value.index(after: close)...]
        } else if let colon = value.firstIndex(of: ":") {
            name = value[..<colon]
            port = value[colon...]
        } else {
            name = value
            port = ""
        }
        guard port.isEmpty || (port.first == ":" && digits(port.dropFirst(), atMost: 5)) else { return false }
        let octets = name.split(separator: ".", omittingEmptySubsequences: false)
        let loopbackAddress = octets.count == 4 && octets[0] == "127"
            && octets.allSatisfy { digits($0, atMost: 3) && (Int($0) ?? 256) <= 255 }
        return name == "localhost" || name == "[::1]" || loopbackAddress
    }

    private func unauthorized(_ failure: Authenticator.Failure) -> HTTPResponse {
        let message = switch failure {
        case .missing: "log in: this needs a user name and password (HTTP basic authentication)"
        case .malformed: "the Authorization header is not HTTP basic credentials"
        case .wrongCredentials: "wrong user name or password"
        }
        var response = HTTPResponse.refusal(.unauthorized, message)
        response.headers["WWW-Authenticate"] = "Basic realm=\"\(realm)\", charset=\"UTF-8\""
        return response
    }
}
