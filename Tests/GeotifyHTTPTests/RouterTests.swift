import GeotifyHTTP
import Testing

@Suite struct RouterTests {
    static func route(_ method: String, _ pattern: String, access: Route.Access = .open) -> Route {
        Route(method, pattern, access: access) { _, _, _, responder in responder.send(.text(pattern)) }
    }

    let router = Router([
        route("GET", "/"),
        route("GET", "/api/state"),
        route("POST", "/api/cmd/{device...}"),
        route("GET", "/leaflet/{file...}"),
        route("GET", "/api/things/{id}"),
        route("POST", "/api/things/{id}"),
    ])

    @Test func literalPathsMatchExactly() {
        guard case .found(let route, let captures) = router.route("GET", "/api/state") else {
            Issue.record("no route")
            return
        }
        #expect(route.pattern == "/api/state")
        #expect(captures.isEmpty)
        guard case .notFound = router.route("GET", "/api/state/more") else {
            Issue.record("a longer path matched")
            return
        }
        guard case .notFound = router.route("GET", "/api") else {
            Issue.record("a shorter path matched")
            return
        }
    }

    @Test func theRootIsItsOwnRoute() {
        guard case .found(let route, _) = router.route("GET", "/") else {
            Issue.record("no route for /")
            return
        }
        #expect(route.pattern == "/")
    }

    @Test func aRestCaptureTakesEveryRemainingSegmentWithItsSlashes() {
        guard case .found(_, let captures) = router.route("POST", "/api/cmd/alice/phone") else {
            Issue.record("no route")
            return
        }
        #expect(captures["device"] == "alice/phone")
        guard case .notFound = router.route("POST", "/api/cmd/") else {
            Issue.record("an empty device matched")
            return
        }
    }

    @Test func aSegmentCaptureTakesOneSegment() {
        guard case .found(_, let captures) = router.route("GET", "/api/things/7") else {
            Issue.record("no route")
            return
        }
        #expect(captures["id"] == "7")
        for path in ["/api/things", "/api/things/", "/api/things/7/8"] {
            guard case .notFound = router.route("GET", path) else {
                Issue.record("\(path) matched a pattern of one segment more or less")
                continue
            }
        }
    }

    @Test func headIsServedByGet() {
        guard case .found(let route, _) = router.route("HEAD", "/api/state") else {
            Issue.record("HEAD did not find the GET route")
            return
        }
        #expect(route.method == "GET")
    }

    @Test func aKnownPathWithAnotherMethodIsNotAllowedAndSaysWhatIs() {
        guard case .methodNotAllowed(let allowed) = router.route("DELETE", "/api/things/7") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == ["GET", "HEAD", "POST"])
        guard case .methodNotAllowed(let onlyPost) = router.route("GET", "/api/cmd/alice/phone") else {
            Issue.record("expected 405")
            return
        }
        #expect(onlyPost == ["POST"])
    }

    @Test func unknownPathsAreNotFound() {
        guard case .notFound = router.route("GET", "/nothing") else {
            Issue.record("expected 404")
            return
        }
    }

    /// A literal segment is the whole segment: `/api/statex` is not `/api/state`, nor
    /// `/api/cmdx/alice/phone` a command.
    @Test func aLiteralSegmentMatchesOnlyWhole() {
        for path in ["/api/statex", "/apix/state", "/api/cmdx/alice/phone"] {
            guard case .notFound = router.route("GET", path) else {
                Issue.record("\(path) matched")
                continue
            }
        }
    }

    /// Two routes of one method that fit a path (`/files/readme` and `/files/{name}`) give
    /// the method once in `Allow`, and `HEAD` once with it; the first that fits is the one
    /// found.
    @Test func aMethodAllowedByTwoRoutesIsNamedOnce() {
        let router = Router([
            Self.route("GET", "/files/readme"),
            Self.route("GET", "/files/{name}"),
            Self.route("PUT", "/files/{name}"),
        ])
        guard case .methodNotAllowed(let allowed) = router.route("DELETE", "/files/readme") else {
            Issue.record("expected 405")
            return
        }
        #expect(allowed == ["GET", "HEAD", "PUT"])
        guard case .found(let route, let captures) = router.route("GET", "/files/readme") else {
            Issue.record("no route")
            return
        }
        #expect(route.pattern == "/files/readme" && captures.isEmpty)
    }
}
