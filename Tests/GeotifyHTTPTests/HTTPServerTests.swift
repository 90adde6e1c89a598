import Foundation
import GeotifyHTTP
import GeotifyJSON
import GeotifyTestSupport
import GeotifyTime
import Synchronization
import Testing

/// The server on a real socket: what only libmicrohttpd and the kernel can show.
@Suite(.serialized, .waiting) struct HTTPServerTests {
    /// A running server with a few test routes, on a free port, with a manual clock.
    final class Running: Sendable {
        /// What the handler and the counter saw, and the gate that keeps the polling
        /// thread in the handler of `/hold` (signalling `holding`) until `release`.
        final class Probe: Sendable {
            let parked = Mutex<[HTTPResponder]>([])
            let counts = Mutex<[String: Int]>([:])
            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            /// Leases held by streams' openings (`/opening/<bytes>`) and bodies
            /// (`/held/<bytes>`, `/bytes/<bytes>`).
            let leases = Mutex(0)
            /// The last `/held/<bytes>` body's box, while something else keeps it.
            let held = Mutex(WeakBody())
            /// The last `/events` subscription, while something else keeps it.
            let subscription = Mutex(WeakSubscription())
            /// Signalled by a `Gate` let go of, which then waits for `ungate`.
            let gateReached = DispatchSemaphore(value: 0)
            let ungate = DispatchSemaphore(value: 0)
        }

        /// A subscription not kept alive by the probe.
        struct WeakSubscription: Sendable {
            weak var subscription: EventSubscription?
        }

        /// A box not kept alive by the probe.
        struct WeakBody: Sendable {
            weak var body: HeldBody?
        }

        /// Counts itself in `Probe.leases` while it lives.
        final class Lease: Sendable {
            let probe: Probe

            init(_ probe: Probe) {
                self.probe = probe
                probe.leases.withLock { $0 += 1 }
            }

            deinit {
                probe.leases.withLock { $0 -= 1 }
            }
        }

        /// Holds the thread that lets go of it (`stop()`, closing a `/gated/<bytes>`
        /// stream whose opening is not read) until `Probe.ungate`, once it has signalled
        /// `Probe.gateReached`; at most 10 s, so a failed test does not hang.
        final class Gate: Sendable {
            let probe: Probe

            init(_ probe: Probe) {
                self.probe = probe
            }

            deinit {
                probe.gateReached.signal()
                _ = probe.ungate.wait(timeout: .now() + 10)
            }
        }

        let server: HTTPServer
        let scheduler = ManualScheduler()
        let port: Int
        let stream: EventStream
        let probe = Probe()

        init(stream: EventStream = EventStream(), configure: (inout HTTPServer.Options) -> Void = { _ in }) throws {
            self.stream = stream
            var options = HTTPServer.Options(listen: ListenAddress(host: "127.0.0.1", port: 0))
            options.defaultHeaders = ["X-Content-Type-Options": "nosniff"]
            options.limits = RequestLimits(maximumBodyBytes: 1000)
            options.maximumHeaderBytes = 4096
            configure(&options)
            let stream = self.stream
            let probe = self.probe
            let handler: HTTPServer.Handler = { request, responder in
                switch request.path {
                case "/later", "/never":
                    probe.parked.withLock { $0.append(responder) }
                case "/hold":
                    probe.holding.signal()
                    _ = probe.release.wait(timeout: .now() + 10)
                    responder.send(.text("released"))
                case let path where path.hasPrefix("/opening/"):
                    // A stream opening with an event of that many bytes, holding a lease.
                    if let size = Int(path.dropFirst("/opening/".count)), let subscription = stream.subscribe() {
                        let opening = Array("event: state\ndata: ".utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: size)
                            + Array("\ndata: end of the opening\n\n".utf8)
                        subscription.open(opening, holding: Lease(probe))
                        responder.send(HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: .events(subscription)))
                    }
                case let path where path.hasPrefix("/gated/"):
                    // A stream opening with that many bytes, holding a gate.
                    if let size = Int(path.dropFirst("/gated/".count)), let subscription = stream.subscribe() {
                        subscription.open([UInt8](repeating: UInt8(ascii: ":"), count: size), holding: Gate(probe))
                        responder.send(HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: .events(subscription)))
                    }
                case let path where path.hasPrefix("/held/"):
                    // A body of that many bytes written into its box, noting the box, with a lease.
                    let body = HeldBody(count: Int(path.dropFirst("/held/".count)) ?? 0) { memory in
                        memory.initializeMemory(as: UInt8.self, repeating: UInt8(ascii: "a"))
                    }
                    probe.held.withLock { $0.body = body }
                    var response = HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: .held(body))
                    response.lease = Lease(probe)
                    responder.send(response)
                case let path where path.hasPrefix("/bytes/"):
                    // A body of that many bytes as an array, with a lease.
                    let bytes = [UInt8](repeating: UInt8(ascii: "a"), count: Int(path.dropFirst("/bytes/".count)) ?? 0)
                    var response = HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: .bytes(bytes))
                    response.lease = Lease(probe)
                    responder.send(response)
                case "/events":
                    if let subscription = stream.subscribe() {
                        probe.subscription.withLock { $0.subscription = subscription }
                        responder.send(HTTPResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: .events(subscription)))
                    }
                default:
                    let echo: JSON = [
                        "method": .string(request.method), "path": .string(request.path),
                        "query": .object(JSONObject(request.query.sorted { $0.key < $1.key }.map { .init(key: $0.key, value: .string($0.value)) })),
                        "body": .string(String(decoding: request.body, as: UTF8.self)),
                        "agent": .string(request.header("User-Agent") ?? ""),
                    ]
                    responder.send(.json(echo))
                }
            }
            server = HTTPServer(
                options: options, scheduler: scheduler, log: { _, _ in },
                count: { name in probe.counts.withLock { $0[name, default: 0] += 1 } }
            ) { head in
                // What an application refuses on the header alone (a missing login).
                if head.path.hasPrefix("/locked"), head.header("authorization") == nil {
                    return .refuse(.refusal(.unauthorized, "log in"))
                }
                return .proceed(handler)
            }
            port = try server.start().port
        }

        deinit {
            server.stop()
        }

        func count(_ name: String) -> Int { probe.counts.withLock { $0[name] ?? 0 } }

        func connection() throws -> RawHTTPConnection { try RawHTTPConnection(port: port) }

        /// A plain GET on a new connection.
        func get(_ path: String) throws -> RawHTTPConnection.Response {
            let connection = try connection()
            try connection.send("GET \(path) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
            return try connection.readResponse()
        }
    }

    /// A port another program holds is refused with the system's reason and the address
    /// the settings name (libmicrohttpd's own line names port 0).
    @Test func aPortInUseIsRefusedWithTheAddressAndTheReason() throws {
        let (listener, port) = try listenOnLoopback()
        defer { close(listener) }
        let server = HTTPServer(
            options: HTTPServer.Options(listen: ListenAddress(host: "127.0.0.1", port: port)), scheduler: ManualScheduler(),
            log: { _, _ in }, count: { _ in }
        ) { _ in .refuse(.refusal(.unauthorized, "none")) }
        #expect(throws: HTTPServerError("cannot listen on 127.0.0.1:\(port): Address already in use")) { try server.start() }
    }

    @Test func aRequestIsDecodedAndAnsweredWithTheDefaultHeaders() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("POST /h%C3%A9llo/x?name=a%20b&n=1 HTTP/1.1\r\nHost: test\r\nUser-Agent: raw\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello")
        let response = try connection.readResponse()
        #expect(response.status == 200)
        #expect(response.headers["x-content-type-options"] == "nosniff")
        let json = try JSONParser().parse(response.body)
        #expect(json["path"]?.stringValue == "/héllo/x")
        #expect(json["query"]?["name"]?.stringValue == "a b")
        #expect(json["body"]?.stringValue == "hello")
        #expect(json["agent"]?.stringValue == "raw")
        #expect(running.count("http_responses.200") == 1)
    }

    /// libmicrohttpd decoded the path and query in place into C strings, which ended at a
    /// `%00`: `POST /api/cmd/a/b%00c` reached the handler as `/api/cmd/a/b`. A control
    /// character, escaped or raw, in the path or in a query name or value is now 400
    /// `bad_uri` before any handler runs; every other escape decodes as before.
    @Test func aControlCharacterInThePathOrQueryIs400AndOtherEscapesDecodeAsBefore() throws {
        let running = try Running()
        let refused = [
            "POST /api/cmd/a/b%00c", "GET /api/fences.geojson%00.html", "GET /x?mode=replace%00x", "GET /x?a%00b=1",
            "GET /x%0Ay", "GET /x%0d%0aSet-Cookie:%20a=b", "GET /x?n=%1F", "GET /x%7F", "GET /x\u{01}y",
            "GET /api/devices/%FF", "GET /x?n=%C0%AF", "GET /x%ED%A0%80", "GET /x?a=%C3&b=%00",
        ]
        for line in refused {
            let answer = try answer("\(line) HTTP/1.1\r\nHost: test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", from: running)
            #expect(answer.status == 400 && answer.code == "bad_uri", "\(line.debugDescription)")
        }
        #expect(running.count("http_refused.bad_uri") == refused.count)
        #expect(running.count("http_responses.400") == refused.count)
        #expect(running.count("http_responses.200") == 0, "no handler ran")

        // Decoded as libmicrohttpd decoded them (`+` is a space in the query only), on one
        // keep-alive connection.
        let connection = try running.connection()
        let decoded: [(String, path: String, query: String?)] = [
            ("/alice%2Fphone", "/alice/phone", nil), ("/a%20b+c", "/a b+c", nil), ("/caf%C3%A9", "/café", nil),
            ("/x%zz%4%", "/x%zz%4%", nil), ("/%2500", "/%00", nil), ("/x?n=a%2Fb+c%20%C3%A9%2B", "/x", "a/b c é+"),
        ]
        for (target, path, query) in decoded {
            try connection.send("GET \(target) HTTP/1.1\r\nHost: test\r\n\r\n")
            let response = try connection.readResponse()
            #expect(response.status == 200, "\(target)")
            let json = try JSONParser().parse(response.body)
            #expect(json["path"]?.stringValue == path, "\(target)")
            #expect(json["query"]?["n"]?.stringValue == query, "\(target)")
        }
        #expect(running.count("http_refused.bad_uri") == refused.count)
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnectionAndHeadHasNoBody() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("GET /one HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try connection.readResponse().status == 200)
        try connection.send("HEAD /two HTTP/1.1\r\nHost: test\r\n\r\n")
        let head = try connection.readResponse(head: true)
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        try connection.send("GET /three HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        #expect(try JSONParser().parse(connection.readResponse().body)["path"]?.stringValue == "/three")
    }

    /// A handler may answer later, from another thread; the connection resumed for the
    /// answer sends it without running the handler again (a command would run twice).
    @Test func aResponseMayComeLaterFromAnotherThread() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("GET /later HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(waitUntil { running.probe.parked.withLock { !$0.isEmpty } })
        let responder = try #require(running.probe.parked.withLock { $0.first })
        DispatchQueue.global().async { responder.send(.text("done")) }
        let response = try connection.readResponse()
        #expect(response.status == 200)
        #expect(response.text == "done\n")
        #expect(running.probe.parked.withLock { $0.count } == 1, "the handler ran once")
    }

    /// The first answer is the one sent, also when a later one comes before it went out:
    /// a handler's answer that arrives after the reply timeout's 504 was delivered, while
    /// the polling thread is busy and has not yet sent the 504, is dropped.
    @Test func anAnswerAfterTheTimeoutIsDroppedAlsoBeforeThe504IsSent() throws {
        let running = try Running {
            $0.threads = 1
            $0.replyTimeout = 30
        }
        let waiting = try running.connection()
        try waiting.send("GET /later HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(waitUntil { running.probe.parked.withLock { !$0.isEmpty } })
        let holder = try running.connection()
        try holder.send("GET /hold HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        #expect(running.probe.holding.wait(timeout: .now() + 10) == .success, "the polling thread is in the handler")
        running.scheduler.advance(by: 31)
        running.probe.parked.withLock { $0.first }?.send(.text("too late"))
        running.probe.release.signal()
        #expect(try holder.readResponse().text == "released\n")
        #expect(try waiting.readResponse().status == 504)
    }

    /// A field the response sets itself (here its `Content-Type`) is sent as it is; the
    /// server's default for that field fills in only where a response has none.
    @Test func aResponsesOwnFieldWinsOverTheDefault() throws {
        let running = try Running { $0.defaultHeaders["Content-Type"] = "application/octet-stream" }
        let response = try running.get("/x")
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["x-content-type-options"] == "nosniff")
    }

    /// A request refused on its header is answered with `Connection: close`, and the
    /// connection is closed: its body, if one follows, is never read as a next request.
    @Test func aRequestRefusedOnItsHeaderClosesItsConnection() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("GET /locked HTTP/1.1\r\nHost: test\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 401)
        #expect(response.headers["connection"] == "close")
        #expect(connection.isClosedByServer())
    }

    @Test func aResponseThatNeverComesIsAnswered504AfterTheReplyTimeout() throws {
        let running = try Running { $0.replyTimeout = 30 }
        let connection = try running.connection()
        try connection.send("GET /never HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(waitUntil { running.probe.parked.withLock { !$0.isEmpty } })
        running.scheduler.advance(by: 31)
        let response = try connection.readResponse()
        #expect(response.status == 504)
        #expect(try JSONParser().parse(response.body)["error"]?["code"]?.stringValue == "timeout")
        running.probe.parked.withLock { $0.first }?.send(.text("too late"))
        #expect(try running.get("/after").status == 200)
    }

    @Test func anOversizedBodyIs413BeforeItIsSentAndTheServerGoesOn() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 1000000\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 413)
        #expect(try JSONParser().parse(response.body)["error"]?["code"]?.stringValue == "payload_too_large")
        #expect(running.count("http_refused.payload_too_large") == 1)
        #expect(try running.get("/after").status == 200)
    }

    @Test func aChunkedBodyIs411() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("POST /upload HTTP/1.1\r\nHost: test\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        #expect(try connection.readResponse().status == 411)
    }

    /// A request its header already refuses (here: no login) is answered before its body
    /// is sent, so an unauthenticated client cannot make the server store a body.
    @Test func aRequestRefusedOnItsHeaderIsAnsweredBeforeItsBodyArrives() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("POST /locked/upload HTTP/1.1\r\nHost: test\r\nContent-Length: 900\r\n\r\n")
        let response = try connection.readResponse()
        #expect(response.status == 401)
        #expect(connection.isClosedByServer())
        #expect(running.count("http_refused.unauthorized") == 1)
        #expect(try running.get("/after").status == 200)
    }

    /// libmicrohttpd reads the body by the first `Content-Length`; the size check must not
    /// be told another.
    @Test func aRepeatedContentLengthIs400() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 5000000\r\nContent-Length: 5\r\n\r\nhello")
        let response = try connection.readResponse()
        #expect(response.status == 400)
        #expect(try JSONParser().parse(response.body)["error"]?["code"]?.stringValue == "bad_request")
        #expect(running.count("http_refused.bad_request") == 1)
    }

    /// With `identity` (or any coding but chunked) libmicrohttpd reads until the client
    /// closes, whatever the `Content-Length`.
    @Test func aTransferEncodingOtherThanChunkedIs400() throws {
        let running = try Running()
        for header in ["Transfer-Encoding: identity\r\nContent-Length: 5", "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity"] {
            let connection = try running.connection()
            try connection.send("POST /upload HTTP/1.1\r\nHost: test\r\n\(header)\r\n\r\nhello")
            let response = try connection.readResponse()
            #expect(response.status == 400, "\(header)")
        }
        #expect(running.count("http_refused.bad_request") == 2)
    }

    /// The answer to `raw` on a connection of its own, and its error code.
    func answer(_ raw: String, from running: Running) throws -> (status: Int, code: String?) {
        let connection = try running.connection()
        try connection.send(raw)
        let response = try connection.readResponse()
        return (response.status, try? JSONParser().parse(response.body)["error"]?["code"]?.stringValue)
    }

    /// RFC 9112 §3.2: a request with more than one Host line is 400, whatever its version
    /// and whether the copies agree (libmicrohttpd handed on the last).
    @Test func aRequestWithTwoHostLinesIs400() throws {
        let running = try Running()
        for version in ["HTTP/1.1", "HTTP/1.0"] {
            for hosts in ["Host: localhost\r\nHost: attacker.example", "Host: test\r\nhost: test"] {
                let answer = try answer("GET /x \(version)\r\n\(hosts)\r\nConnection: close\r\n\r\n", from: running)
                #expect(answer.status == 400 && answer.code == "bad_host", "\(version) \(hosts)")
            }
        }
        #expect(running.count("http_refused.bad_host") == 4)
        #expect(running.count("http_responses.400") == 4)
        #expect(running.count("http_responses.200") == 0, "no handler ran")
    }

    /// RFC 9112 §3.2: an HTTP/1.1 request without Host is 400 (libmicrohttpd served it);
    /// an HTTP/1.0 one may omit it and is served.
    @Test func anHTTP11RequestWithoutHostIs400AndAnHTTP10OneIsServed() throws {
        let running = try Running()
        let missing = try answer("GET /x HTTP/1.1\r\nConnection: close\r\n\r\n", from: running)
        #expect(missing.status == 400 && missing.code == "bad_host")
        #expect(running.count("http_refused.bad_host") == 1)
        // Neither is a Host line to libmicrohttpd: a space before the colon, a line that
        // begins with a space.
        #expect(try answer("GET /x HTTP/1.1\r\nHost : test\r\nConnection: close\r\n\r\n", from: running).code == "bad_host")
        #expect(try answer("GET /x HTTP/1.1\r\n Host: test\r\nConnection: close\r\n\r\n", from: running).code == "bad_host")
        let old = try answer("GET /x HTTP/1.0\r\n\r\n", from: running)
        #expect(old.status == 200)
    }

    /// RFC 9112 §3.2: a Host that is not a `uri-host [ ":" port ]` is 400; a name, an IPv4
    /// or bracketed IPv6 address, each with or without a port, is served.
    @Test func aHostThatIsNotAHostWithAPortIs400() throws {
        let running = try Running()
        let invalid = HostHeaderTests.invalid
        for value in invalid {
            let answer = try answer("GET /x HTTP/1.1\r\nHost: \(value)\r\nConnection: close\r\n\r\n", from: running)
            #expect(answer.status == 400 && answer.code == "bad_host", "\(value.debugDescription)")
        }
        #expect(running.count("http_refused.bad_host") == invalid.count)
        for value in HostHeaderTests.valid {
            let answer = try answer("GET /x HTTP/1.1\r\nHost: \(value)\r\nConnection: close\r\n\r\n", from: running)
            #expect(answer.status == 200, "\(value.debugDescription)")
        }
        #expect(running.count("http_refused.bad_host") == invalid.count)
    }

    /// libmicrohttpd answers an oversized header itself; it is counted as the server's own
    /// refusals are, by status and code.
    @Test func anOversizedHeaderIs431FromLibmicrohttpdAndCounted() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("GET / HTTP/1.1\r\nHost: test\r\nX-Big: \(String(repeating: "a", count: 20_000))\r\n\r\n")
        #expect(try connection.readResponse().status == 431)
        #expect(running.count("http_responses.431") == 1)
        #expect(running.count("http_refused.header_too_large") == 1)
        #expect(try running.get("/after").status == 200)
    }

    @Test func anOversizedURLIs414FromLibmicrohttpdAndCounted() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("GET /\(String(repeating: "a", count: 20_000)) HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try connection.readResponse().status == 414)
        #expect(running.count("http_responses.414") == 1)
        #expect(running.count("http_refused.uri_too_long") == 1)
        #expect(try running.get("/after").status == 200)
    }

    @Test func garbageIsRefusedWith400AndCounted() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("\u{01}\u{02} nonsense\r\n\r\n")
        #expect(try connection.readResponse().status == 400)
        #expect(running.count("http_responses.400") == 1)
        #expect(running.count("http_refused.bad_request") == 1)
        #expect(try running.get("/after").status == 200)
    }

    @Test func libmicrohttpdsRefusalsAreReadFromItsLogLine() {
        #expect(LibraryRefusal(logLine: "Error processing request (HTTP response code is 431 ('<html>...</html>')). Closing connection.\n")
            == LibraryRefusal(status: 431, code: .headerTooLarge))
        let unnamed = LibraryRefusal(logLine: "Error processing request (HTTP response code is 418 ('x')). Closing connection.")
        #expect(unnamed == LibraryRefusal(status: 418, code: nil))
        #expect(unnamed?.counter == "http_refused.refused_418")
        #expect(LibraryRefusal(logLine: "Closing connection (out of memory).") == nil)
    }

    @Test func aHeaderThatDoesNotArriveInTimeGets408AndTheConnectionIsShut() throws {
        let running = try Running { $0.headerTimeout = 10 }
        let slow = try running.connection()
        try slow.send("GET / HTTP/1.1\r\nHost: te")
        #expect(waitUntil { running.server.connectionCount == 1 })
        running.scheduler.advance(by: 9)
        try slow.send("st\r\nX-A: 1\r\n")
        running.scheduler.advance(by: 2)
        let response = try slow.readResponse()
        #expect(response.status == 408)
        #expect(try JSONParser().parse(response.body)["error"]?["code"]?.stringValue == "header_timeout")
        #expect(slow.isClosedByServer())
        #expect(running.count("http_refused.header_timeout") == 1)
        #expect(running.count("http_responses.408") == 1, "a 408 is counted as a response too, as every refusal answered is")
        #expect(try running.get("/after").status == 200)
    }

    /// The deadline is for the whole request: a body sent a byte at a time, each in time
    /// to keep the connection from being silent, is cut off at `headerTimeout` as well.
    @Test func aBodyThatDoesNotArriveInTimeGets408AndTheConnectionIsShut() throws {
        let running = try Running { $0.headerTimeout = 10 }
        let slow = try running.connection()
        try slow.send("POST /upload HTTP/1.1\r\nHost: test\r\nContent-Length: 10\r\n\r\nhel")
        #expect(waitUntil { running.server.receivingCount == 1 })
        running.scheduler.advance(by: 9)
        try slow.send("lo")
        running.scheduler.advance(by: 2)
        let response = try slow.readResponse()
        #expect(response.status == 408)
        #expect(try JSONParser().parse(response.body)["error"]?["code"]?.stringValue == "request_timeout")
        #expect(slow.isClosedByServer())
        #expect(running.count("http_refused.request_timeout") == 1)
        #expect(running.count("http_responses.408") == 1, "a 408 is counted as a response too, as every refusal answered is")
        #expect(try running.get("/after").status == 200)
    }

    /// Between requests a keep-alive connection is held to `headerTimeout`, not the longer
    /// `idleTimeout` (libmicrohttpd reports a request only once its header is whole, so
    /// idling cannot be told from sending the next header slowly): it is closed without an
    /// answer, and not counted as a refusal, since nothing was asked.
    @Test func anIdleKeepAliveConnectionIsClosedAfterTheHeaderTimeoutUncounted() throws {
        let running = try Running {
            $0.headerTimeout = 10
            $0.idleTimeout = 60
        }
        let connection = try running.connection()
        try connection.send("GET /one HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try connection.readResponse().status == 200)
        #expect(waitUntil(advancing: running.scheduler, by: 1) { running.server.connectionCount == 0 })
        #expect(running.scheduler.uptime < 60)
        #expect(connection.isClosedByServer())
        #expect(running.count("http_refused.header_timeout") == 0)
        #expect(running.count("http_responses.408") == 0)
    }

    @Test func aThousandConcurrentConnectionsAreAllAnswered() throws {
        // Both ends of a thousand connections, in this process.
        OpenFileLimit.raiseToHard()
        try #require((OpenFileLimit.current?.soft ?? 0) >= 4_096, "the test needs 4 096 open files; the hard limit is \(OpenFileLimit.current?.hard ?? 0)")
        let running = try Running { $0.maximumConnections = 1100 }
        let connections = try (0..<1000).map { _ in try running.connection() }
        for (index, connection) in connections.enumerated() {
            try connection.send("GET /n/\(index) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        }
        var statuses: [Int: Int] = [:]
        for connection in connections {
            statuses[try connection.readResponse().status, default: 0] += 1
        }
        #expect(statuses == [200: 1000])
        #expect(try running.get("/after").status == 200)
    }

    /// Requests that all arrive while the polling thread is busy are all read at its next
    /// turn, however many they are. libmicrohttpd's epoll loop left exactly 128 (its
    /// batch) or 256 unread until the idle timeout; 127 and 129 went through.
    @Test(arguments: [127, 128, 129, 256])
    func aBurstArrivingWhileThePollingThreadIsBusyIsAllAnswered(burst: Int) throws {
        let running = try Running { $0.threads = 1 }
        let crowd = try (0..<burst).map { _ in try running.connection() }
        #expect(waitUntil { running.server.connectionCount == burst })
        let holder = try running.connection()
        try holder.send("GET /hold HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        #expect(running.probe.holding.wait(timeout: .now() + 10) == .success, "the polling thread is in the handler")
        for (index, connection) in crowd.enumerated() {
            try connection.send("GET /n/\(index) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        }
        running.probe.release.signal()
        #expect(try holder.readResponse().text == "released\n")
        for connection in crowd {
            #expect(try connection.readResponse().status == 200)
        }
    }

    @Test func overTheConnectionLimitRequestsGet503UntilConnectionsClose() throws {
        let running = try Running { $0.maximumConnections = 20 }
        var connections = try (0..<30).map { _ in try running.connection() }
        #expect(waitUntil { running.server.connectionCount == 30 })
        try connections[0].send("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        let refused = try connections[0].readResponse()
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "5")
        #expect(try JSONParser().parse(refused.body)["error"]?["code"]?.stringValue == "too_many_connections")
        connections.removeAll()
        #expect(waitUntil { running.server.connectionCount == 0 })
        #expect(try running.get("/after").status == 200)
    }

    @Test func anEventStreamDeliversWhatIsPublishedAsItHappens() throws {
        let running = try Running()
        let connection = try running.connection()
        try connection.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
        let header = try connection.readStreamHeader()
        #expect(header.status == 200)
        #expect(header.headers["content-type"] == "text/event-stream")
        #expect(connection.read(until: "retry: 2000") != nil)
        running.stream.publish(ServerSentEvent(name: "device", data: "{\"device\":\"alice/phone\"}"))
        #expect(connection.read(until: "data: {\"device\":\"alice/phone\"}") != nil)
        running.stream.publish(ServerSentEvent(name: "notification", data: "second"))
        #expect(connection.read(until: "data: second") != nil)
    }

    /// A stream's opening holds its lease until libmicrohttpd has taken it whole: a client
    /// that reads gives it back with the opening read; one that does not read (32 MB is
    /// more than the socket buffers on both sides hold) keeps it until its connection closes.
    @Test func aStreamsOpeningHoldsItsLeaseUntilTakenWholeOrItsClientLeaves() throws {
        let running = try Running()
        let reader = try running.connection()
        try reader.send("GET /opening/1000 HTTP/1.1\r\nHost: test\r\n\r\n")
        _ = try reader.readStreamHeader()
        #expect(reader.read(until: "end of the opening") != nil)
        #expect(waitUntil { running.probe.leases.withLock { $0 } == 0 }, "an opening read whole lets go of its lease")
        #expect(running.stream.subscriberCount == 1, "and the stream goes on")
        do {
            let idle = try running.connection()
            try idle.send("GET /opening/\(32 << 20) HTTP/1.1\r\nHost: test\r\n\r\n")
            _ = try idle.readStreamHeader()
            #expect(running.probe.leases.withLock { $0 } == 1, "an opening not read keeps its lease")
        }
        #expect(waitUntil { running.probe.leases.withLock { $0 } == 0 }, "a client that leaves gives it back")
    }

    /// A body is sent from its box's own memory, not from a copy libmicrohttpd makes, so a
    /// large answer is held once: bytes changed in the box after the response was queued
    /// (its end, not yet sent: 32 MiB is more than the socket buffers on both sides hold)
    /// are what the client reads. libmicrohttpd keeps the box (the handler let go of it)
    /// and the response's lease while it sends, and lets go of both once it is sent whole.
    @Test(.enabled(if: HeldBody.isSentInPlace, "libmicrohttpd older than 0.9.73 copies answers"))
    func aBodyIsSentFromItsBoxAndLetGoWithItsLease() throws {
        let running = try Running()
        let size = 32 << 20
        let connection = try running.connection()
        try connection.send("GET /held/\(size) HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")
        #expect(waitUntil { running.count("http_responses.200") == 1 }, "the response is queued")
        #expect(running.probe.leases.withLock { $0 } == 1, "the lease is held while unsent")
        let marker = Array("held once".utf8)
        do {
            let body = try #require(running.probe.held.withLock { $0.body }, "the box is held while unsent")
            let end = UnsafeMutableRawPointer(mutating: try #require(body.contents.baseAddress)) + size - marker.count
            marker.withUnsafeBytes { end.copyMemory(from: $0.baseAddress!, byteCount: marker.count) }
        }
        let response = try connection.readResponse()
        #expect(response.body.count == size)
        #expect(Array(response.body.suffix(marker.count)) == marker, "libmicrohttpd sent the box's memory, not a copy made before")
        #expect(waitUntil { running.probe.leases.withLock { $0 } == 0 && running.probe.held.withLock { $0.body == nil } }, "both are let go once sent")
    }

    /// A body whose client leaves without reading it is let go (with its lease) then,
    /// whether it was written into its box or given as an array.
    @Test(.enabled(if: HeldBody.isSentInPlace, "libmicrohttpd older than 0.9.73 lets go of answers at once"), arguments: ["/held/", "/bytes/"])
    func aBodyNotReadIsLetGoWhenItsClientLeaves(route: String) throws {
        let running = try Running()
        do {
            let connection = try running.connection()
            try connection.send("GET \(route)\(32 << 20) HTTP/1.1\r\nHost: test\r\n\r\n")
            #expect(waitUntil { running.count("http_responses.200") == 1 })
            #expect(running.probe.leases.withLock { $0 } == 1)
        }
        #expect(waitUntil { running.probe.leases.withLock { $0 } == 0 && running.probe.held.withLock { $0.body == nil } })
    }

    /// Clients that open live streams and read nothing hold at most `maximumPendingTotal`
    /// together: once the kernel's buffers for them are full, what waits for them grows
    /// until the total is reached, and then they are closed, furthest behind first, while
    /// a client that reads every event stays. Eight streams each held within their own
    /// bound (1 MiB) would be 8 MiB; the total here is 2 MiB.
    @Test func streamsNotReadAreClosedAtTheTotalWhileOneThatReadsStays() throws {
        let overflows = Mutex(0)
        let bound = 2 << 20
        let running = try Running(stream: EventStream(maximumPendingTotal: bound, onOverflow: { overflows.withLock { $0 += 1 } }))
        let reader = try running.connection()
        try reader.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
        _ = try reader.readStreamHeader()
        let idle = try (0..<8).map { _ in
            let connection = try running.connection()
            try connection.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
            _ = try connection.readStreamHeader()
            return connection
        }
        #expect(running.stream.subscriberCount == 9)
        // 64 KiB events, each read whole by the reader before the next is published, until
        // the idle streams are closed; at most 64 MiB, far more than the kernel holds for
        // eight connections (about 4 MiB each) and the total together.
        var published = 0
        var highest = 0
        while running.stream.subscriberCount > 1 && published < 1024 {
            published += 1
            running.stream.publish(ServerSentEvent(data: String(repeating: "x", count: 64 << 10) + " event \(published)."))
            highest = max(highest, running.stream.pendingTotal)
            guard reader.read(until: " event \(published).") != nil else {
                Issue.record("the reader did not get event \(published)")
                break
            }
        }
        #expect(highest <= bound, "what waits for all streams together stays within the total")
        #expect(highest > bound / 2, "the idle streams did fall behind")
        #expect(running.stream.subscriberCount == 1, "every idle stream is closed (after \(published) events)")
        #expect(overflows.withLock { $0 } == 8, "each counted once")
        running.stream.publish(ServerSentEvent(data: "after"))
        #expect(reader.read(until: "data: after") != nil, "the reader's stream goes on")
        #expect(idle[0].read(until: "\r\n0\r\n\r\n") != nil, "an idle client that reads at last finds its stream ended")
    }

    @Test func aStreamWhoseClientLeftIsDroppedAtTheNextWrite() throws {
        let running = try Running()
        do {
            let connection = try running.connection()
            try connection.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
            _ = try connection.readStreamHeader()
            #expect(running.stream.subscriberCount == 1)
        }
        #expect(waitUntil {
            running.stream.keepAlive()
            return running.stream.subscriberCount == 0
        })
        #expect(waitUntil { running.probe.subscription.withLock { $0.subscription == nil } }, "and the server lets go of it")
    }

    @Test func stoppingEndsStreamsAndAnswersWaitingRequests() throws {
        let running = try Running()
        let streamConnection = try running.connection()
        try streamConnection.send("GET /events HTTP/1.1\r\nHost: test\r\n\r\n")
        _ = try streamConnection.readStreamHeader()
        let waiting = try running.connection()
        try waiting.send("GET /never HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(waitUntil { running.probe.parked.withLock { !$0.isEmpty } })
        running.server.stop()
        #expect(try waiting.readResponse().status == 503)
        #expect(streamConnection.isClosedByServer())
        running.server.stop()
    }

    /// A request whose header was admitted before the server began to stop, and whose
    /// body is complete only after, is answered 503 at once, its handler having run: the
    /// server does not wait for the handler's answer (`stop()` answers only the requests
    /// waiting when it began, and libmicrohttpd aborts the process when it is stopped
    /// with a connection suspended). `stop()` is held after it began, where it closes the
    /// streams (a stream's opening not read lets go of its `Gate`), while the body's end
    /// arrives.
    @Test func aRequestCompletedOnceTheServerIsStoppingIs503() throws {
        let running = try Running()
        let gated = try running.connection()
        try gated.send("GET /gated/\(32 << 20) HTTP/1.1\r\nHost: test\r\n\r\n")
        _ = try gated.readStreamHeader()
        let late = try running.connection()
        try late.send("POST /never HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhel")
        #expect(waitUntil { running.server.receivingCount == 1 }, "the header is admitted")
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            running.server.stop()
            stopped.signal()
        }
        #expect(running.probe.gateReached.wait(timeout: .now() + 10) == .success, "stop() has begun")
        try late.send("lo")
        // Checked while stop() is held: a server that waited would answer nothing until
        // libmicrohttpd stopped, which aborts the process for the connection suspended.
        let response = try? late.readResponse()
        #expect(response?.status == 503, "answered while stop() is held")
        #expect(response.flatMap { try? JSONParser().parse($0.body)["error"]?["code"]?.stringValue } == "shutting_down")
        #expect(running.probe.parked.withLock { $0.count } == 1, "the handler ran: the header was admitted before the stop")
        running.probe.ungate.signal()
        #expect(stopped.wait(timeout: .now() + 10) == .success, "stop() ends")
    }

    @Test func aTakenAddressIsAClearError() throws {
        let running = try Running()
        let second = HTTPServer(
            options: HTTPServer.Options(listen: ListenAddress(host: "127.0.0.1", port: running.port)),
            scheduler: ManualScheduler(), log: { _, _ in }, count: { _ in }
        ) { _, responder in responder.send(.text("")) }
        #expect(throws: HTTPServerError.self) { try second.start() }
    }

    @Test func theConnectionLimitIsExact() throws {
        let running = try Running { $0.maximumConnections = 4 }
        var connections = try (0..<5).map { _ in try running.connection() }
        #expect(waitUntil { running.server.connectionCount == 5 })
        try connections[0].send("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try connections[0].readResponse().status == 503, "one connection more than maximumConnections")
        connections.removeFirst()
        #expect(waitUntil { running.server.connectionCount == 4 })
        try connections[0].send("GET / HTTP/1.1\r\nHost: test\r\n\r\n")
        #expect(try connections[0].readResponse().status == 200, "exactly maximumConnections are served")
    }
}
