import GeotifyHTTP
import Testing

@Suite struct HTTPApplicationTests {
    static let hash = AuthenticatorTests.hash

    static func application(logins: Bool, base: String = "") throws -> HTTPApplication {
        let routes = [
            Route("GET", "/healthz", access: .open) { _, _, _, responder in responder.send(.text("ok")) },
            Route("GET", "/api/state", access: .role(.read)) { _, _, user, responder in responder.send(.text(user.name ?? "anyone")) },
            Route("POST", "/api/change", access: .role(.manage)) { _, _, _, responder in responder.send(.text("changed")) },
        ]
        let authenticator = logins
            ? Authenticator(users: UsersFile(hashes: ["alice": hash, "bob": hash]), roles: ["alice": [.manage]], uptime: { 0 })
            : nil
        return HTTPApplication(router: Router(routes), basePath: try BasePath(base), authenticator: authenticator)
    }

    static func answer(_ application: HTTPApplication, _ request: HTTPRequest) -> HTTPResponse? {
        var answer: HTTPResponse?
        let box = ResponseBox()
        application.handle(request, HTTPResponder { box.set($0) })
        answer = box.response
        return answer
    }

    func alice() -> [String: String] { ["Authorization": BasicCredentials(user: "alice", password: "s3cret").authorization] }
    func bob() -> [String: String] { ["Authorization": BasicCredentials(user: "bob", password: "s3cret").authorization] }

    @Test func withoutLoginsEveryoneMayDoEverything() throws {
        let application = try Self.application(logins: false)
        #expect(Self.answer(application, HTTPRequest(method: "GET", path: "/api/state"))?.status == 200)
        #expect(Self.answer(application, HTTPRequest(method: "POST", path: "/api/change"))?.status == 200)
    }

    @Test func withLoginsAMissingOrWrongLoginGets401WithAChallenge() throws {
        let application = try Self.application(logins: true)
        let missing = try #require(Self.answer(application, HTTPRequest(method: "GET", path: "/api/state")))
        #expect(missing.status == 401)
        #expect(missing.refusalCode == .http(.unauthorized))
        #expect(missing.headers["WWW-Authenticate"] == "Basic realm=\"Geotify\", charset=\"UTF-8\"")
        let wrong = HTTPRequest(method: "GET", path: "/api/state", headers: ["Authorization": BasicCredentials(user: "alice", password: "x").authorization])
        #expect(Self.answer(application, wrong)?.status == 401)
    }

    @Test func aUserWithoutTheRoleGets403() throws {
        let application = try Self.application(logins: true)
        #expect(Self.answer(application, HTTPRequest(method: "GET", path: "/api/state", headers: bob()))?.status == 200)
        let refused = try #require(Self.answer(application, HTTPRequest(method: "POST", path: "/api/change", headers: bob())))
        #expect(refused.status == 403)
        #expect(refused.refusalCode == .http(.notAllowed))
        #expect(Self.answer(application, HTTPRequest(method: "POST", path: "/api/change", headers: alice()))?.status == 200)
    }

    @Test func openRoutesNeedNoLogin() throws {
        let application = try Self.application(logins: true)
        #expect(Self.answer(application, HTTPRequest(method: "GET", path: "/healthz"))?.status == 200)
    }

    @Test func changesFromAnotherSitesPageAreRefused() throws {
        let application = try Self.application(logins: true)
        var headers = alice()
        headers["Sec-Fetch-Site"] = "cross-site"
        let refused = Self.answer(application, HTTPRequest(method: "POST", path: "/api/change", headers: headers))
        #expect(refused?.status == 403)
        #expect(refused?.refusalCode == .http(.crossSite))
        #expect(Self.answer(application, HTTPRequest(method: "GET", path: "/api/state", headers: headers))?.status == 200)
        headers["Sec-Fetch-Site"] = "same-origin"
        #expect(Self.answer(application, HTTPRequest(method: "POST", path: "/api/change", headers: headers))?.status == 200)
    }

    @Test func unknownPathsAndMethodsGetTheirStatuses() throws {
        let application = try Self.application(logins: false)
        #expect(Self.answer(application, HTTPRequest(method: "GET", path: "/nothing"))?.status == 404)
        let wrongMethod = try #require(Self.answer(application, HTTPRequest(method: "DELETE", path: "/api/state")))
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.headers["Allow"] == "GET, HEAD")
    }

    @Test func aBasePathIsTakenOffAndItsBareFormRedirected() throws {
        let application = try Self.application(logins: false, base: "/geotify")
        #expect(Self.answer(application, HTTPRequest(method: "GET", path: "/geotify/healthz"))?.status == 200)
        let redirect = Self.answer(application, HTTPRequest(method: "GET", path: "/geotify"))
        #expect(redirect?.status == 308)
        #expect(redirect?.headers["Location"] == "/geotify/")
    }

    /// Without logins a page on another site, whose name the attacker made resolve to
    /// 127.0.0.1 (DNS rebinding), must not reach the console: it sends its own name.
    @Test func withoutLoginsOnlyALoopbackHostIsServed() throws {
        let application = try Self.application(logins: false)
        for host in ["evil.example", "evil.example:8091", "localhost.evil.example", "127.0.0.1.evil.example", "[::1].evil:80", "localhost:", "10.0.0.1"] {
            let refused = Self.answer(application, HTTPRequest(method: "GET", path: "/api/state", headers: ["Host": host]))
            #expect(refused?.status == 421, "\(host)")
            #expect(refused?.refusalCode == .http(.misdirectedHost))
        }
        for host in ["localhost", "LOCALHOST:8091", "127.0.0.1", "127.0.0.1:8091", "127.1.2.3:80", "[::1]", "[::1]:8091"] {
            #expect(Self.answer(application, HTTPRequest(method: "GET", path: "/api/state", headers: ["Host": host]))?.status == 200, "\(host)")
        }
    }

    @Test func withLoginsAnyHostIsServed() throws {
        let application = try Self.application(logins: true)
        var headers = alice()
        headers["Host"] = "geotify.example.org"
        #expect(Self.answer(application, HTTPRequest(method: "GET", path: "/api/state", headers: headers))?.status == 200)
    }

    /// Every address of 127.0.0.0/8 is a loopback host, up to `127.255.255.255`; an
    /// octet past 255 is not an address.
    @Test func everyAddressOf127IsALoopbackHost() {
        for host in ["127.0.0.255", "127.255.255.255:8091", "127.0.255.1"] {
            #expect(HTTPApplication.isLoopback(host: host), "\(host)")
        }
        for host in ["127.0.0.256", "127.256.0.1:8091"] {
            #expect(!HTTPApplication.isLoopback(host: host), "\(host)")
        }
    }

    /// A `HEAD` from another site's page changes nothing, as a `GET` does not: it is
    /// served.
    @Test func aHeadFromAnotherSitesPageIsServed() throws {
        let application = try Self.application(logins: true)
        var headers = alice()
        headers["Sec-Fetch-Site"] = "cross-site"
        #expect(Self.answer(application, HTTPRequest(method: "HEAD", path: "/api/state", headers: headers))?.status == 200)
    }
}
