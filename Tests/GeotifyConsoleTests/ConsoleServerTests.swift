import Foundation
import GeotifyConsole
import GeotifyConsoleFixture
import GeotifyHTTP
import GeotifyJSON
import GeotifyTestSupport
import GeotifyTime
import Testing

/// The console on a real socket: the headers a browser sees, and hostile HTTP that must
/// get a clear status while positions keep being evaluated.
@Suite(.serialized, .waiting) struct ConsoleServerTests {
    final class Served {
        let harness: ConsoleHarness
        let port: Int

        init() throws {
            harness = try ConsoleHarness(settings: ["listen": "127.0.0.1:0", "maximumBodyBytes": 4096, "headerTimeout": 10])
            port = try harness.console.start().port
        }

        deinit {
            harness.console.stop()
        }

        func send(_ raw: String) throws -> RawHTTPConnection.Response {
            let connection = try RawHTTPConnection(port: port)
            try connection.send(raw)
            return try connection.readResponse()
        }

        /// Posts a fix for alice/phone and says whether the device is now at that latitude.
        func evaluates(latitude: Double, time: Int) throws -> Bool {
            let body = "{\"_type\":\"location\",\"lat\":\(latitude),\"lon\":13.405,\"tst\":\(time)}"
            let response = try send("POST /pub HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Limit-U: alice\r\nX-Limit-D: phone\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
            guard response.status == 200 else { return false }
            return harness.bridge.devices().first { $0.device == "alice/phone" }?.position?.latitude == latitude
        }
    }

    @Test func thePageCarriesTheSecurityHeaders() throws {
        let served = try Served()
        let page = try served.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(page.status == 200)
        let policy = page.headers["content-security-policy"] ?? ""
        #expect(policy.contains("default-src 'none'"))
        #expect(policy.contains("script-src 'self'"))
        #expect(policy.contains("img-src 'self' data: https://tile.openstreetmap.org"))
        #expect(policy.contains("frame-ancestors 'none'"))
        #expect(page.headers["x-content-type-options"] == "nosniff")
        #expect(page.headers["x-frame-options"] == "DENY")
        #expect(page.headers["cache-control"] == "no-store")
        let health = try served.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(health.headers["x-content-type-options"] == "nosniff")
    }

    /// Without logins, a page whose own name was made to resolve to 127.0.0.1 (DNS
    /// rebinding) is refused on its Host, and counted; loopback names are served.
    @Test func withoutLoginsAReboundHostIsRefusedAndCounted() throws {
        let served = try Served()
        let body = "{\"action\":\"add\",\"fence\":{\"identifier\":\"rebound\",\"latitude\":1,\"longitude\":1,\"radius\":50}}"
        let rebound = try served.send(
            "POST /api/cmd/alice/phone HTTP/1.1\r\nHost: attacker.example:8091\r\nSec-Fetch-Site: same-origin\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        #expect(rebound.status == 421)
        #expect(try JSONParser().parse(rebound.body)["error"]?["code"] == "misdirected_host")
        #expect(served.harness.bridge.counter("http_refused.misdirected_host") == 1)
        #expect(try served.send("GET /api/state HTTP/1.1\r\nHost: localhost:8091\r\nConnection: close\r\n\r\n").status == 200)
        #expect(try served.send("GET /api/state HTTP/1.1\r\nHost: [::1]:8091\r\nConnection: close\r\n\r\n").status == 200)
    }

    /// A malformed Host is 400 `bad_host` before the DNS-rebinding check reads it: the
    /// check never sees a value that a proxy in front could read as another host.
    @Test func aMalformedHostIs400BeforeTheReboundHostCheck() throws {
        let served = try Served()
        for host in ["attacker.example/x", "localhost@attacker.example", "attacker example"] {
            let refused = try served.send("GET /api/state HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n")
            #expect(refused.status == 400, "\(host)")
            #expect(try JSONParser().parse(refused.body)["error"]?["code"] == "bad_host", "\(host)")
        }
        let twice = try served.send("GET /api/state HTTP/1.1\r\nHost: attacker.example\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        #expect(twice.status == 400)
        #expect(served.harness.bridge.counter("http_refused.bad_host") == 4)
        #expect(served.harness.bridge.counter("http_refused.misdirected_host") == 0)
        #expect(try served.send("GET /api/state HTTP/1.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n").status == 421)
    }

    /// The server lets go of an answer once it is sent, so its slot among the user's
    /// unsent large answers comes back: more states than the bound, each read, are served.
    @Test func answersReadWholeGiveTheirSlotsBack() throws {
        let served = try Served()
        for _ in 0..<(3 * Console.maximumUnsentAnswers) {
            #expect(try served.send("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").status == 200)
        }
        #expect(waitUntil { served.harness.console.unsent.unsent("") == 0 })
    }

    /// A fence book of the documented size (1 000 devices with 20 fences each) lists as
    /// more than a stream's 1 MiB bound. A fence change is told to the pages as a small
    /// notice, not as the whole list: a page that reads its stream keeps it open through
    /// the change (no overflow counted) and fetches `/api/fences` for the new list.
    @Test func aFenceChangeInALargeBookIsASmallNoticeThatKeepsTheStreamOpen() throws {
        let served = try Served()
        let devices = (0..<1000).map { device in
            let fences = (0..<20).map { fence in
                "{\"identifier\":\"f\(fence)\",\"latitude\":52.5,\"longitude\":13.4,\"radius\":100,\"eventType\":\"onEntry\",\"note\":\"fence \(fence) of device \(device)\"}"
            }
            return "\"user\(device)/phone\":[\(fences.joined(separator: ","))]"
        }
        try Data("{\"devices\":{\(devices.joined(separator: ","))}}".utf8).write(to: URL(fileURLWithPath: served.harness.fencesPath))
        let listed = try served.send("GET /api/fences HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(listed.body.count > EventStream.defaultMaximumPending, "the list is larger than a stream's bound")

        let page = try RawHTTPConnection(port: served.port)
        try page.send("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try page.readStreamHeader().status == 200)
        #expect(page.read(until: "\"notifications\":") != nil, "the opening state is read")

        let body = "{\"action\":\"edit\",\"fence\":\"f0\",\"changes\":{\"note\":\"changed meanwhile\"}}"
        let edited = try served.send(
            "POST /api/cmd/user0/phone HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        #expect(edited.status == 200)
        served.harness.console.flush()
        let notice = try #require(page.read(until: "event: fences\ndata: "), "the stream carries the notice")
        var data = notice.components(separatedBy: "event: fences\ndata: ").last ?? ""
        if !data.contains("\n\n") { data += page.read(until: "\n\n") ?? "" }
        #expect(data.hasPrefix("{\"changed\":true}\n\n"), "the notice is small: \(data.prefix(80))")
        let metrics = try served.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(metrics.text.contains("\ngeotify_http_event_subscribers 1\n"), "the stream stays open")
        #expect(served.harness.bridge.counter("http_refused.too_far_behind") == 0)

        let after = try served.send("GET /api/fences HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        #expect(after.text.contains("changed meanwhile"), "the list the page fetches then has the change")
        served.harness.move(52.52, 13.405)
        served.harness.console.flush()
        #expect(page.read(until: "event: device\n") != nil, "updates go on")
    }

    /// libmicrohttpd's decoding ended the path and query values at a `%00`: a command for
    /// `alice/phone%00x` ran for alice/phone, `/api/fences.geojson%00.html` was the export,
    /// and `mode=replace%00x` replaced. Each is now 400 `bad_uri`, counted, and nothing
    /// runs; `%2F` in a device name is still a slash.
    @Test func anEscapedNULIsRefusedBeforeAnyRouteAndAnEscapedSlashStillNamesTheDevice() throws {
        let served = try Served()
        func post(_ target: String, _ body: String) throws -> RawHTTPConnection.Response {
            try served.send("POST \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)")
        }
        let list = "{\"action\":\"list\"}"
        let kiosk = #"{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"name":"kiosk","radius":25},"geometry":{"type":"Point","coordinates":[13.3,52.45]}}]}"#
        let refused = [
            try post("/api/cmd/alice/phone%00x", list),
            try served.send("GET /api/fences.geojson%00.html HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"),
            try post("/api/fences.geojson?device=bob/phone&mode=replace%00x", kiosk),
        ]
        for response in refused {
            #expect(response.status == 400)
            #expect(try JSONParser().parse(response.body)["error"]?["code"] == "bad_uri")
        }
        #expect(served.harness.bridge.counter("http_refused.bad_uri") == 3)
        #expect(served.harness.bridge.counter("commands_executed") == 0)
        #expect(served.harness.bridge.fenceBook().fences(of: "bob/phone").allSatisfy { $0.identifier != "kiosk" }, "nothing imported")

        let escaped = try post("/api/cmd/alice%2Fphone", list)
        #expect(escaped.status == 200)
        #expect(try JSONParser().parse(escaped.body)["fences"]?.arrayValue?.contains { $0["identifier"] == "home" } == true)
        #expect(served.harness.bridge.counter("commands_executed") == 1)
    }

    @Test func hostileRequestsGetClearStatusesAndPositionsAreStillEvaluated() throws {
        // Both ends of the crowd of a thousand connections below, in this process.
        OpenFileLimit.raiseToHard()
        try #require((OpenFileLimit.current?.soft ?? 0) >= 4_096, "the test needs 4 096 open files; the hard limit is \(OpenFileLimit.current?.hard ?? 0)")
        let served = try Served()
        #expect(try served.evaluates(latitude: 52.50, time: 1))
        let oversized = try served.send("POST /pub HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n")
        #expect(oversized.status == 413)
        let badJSON = try served.send("POST /pub HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: close\r\n\r\n{nope")
        #expect(badJSON.status == 400)
        #expect(try JSONParser().parse(badJSON.body)["error"]?["code"] == "invalid_json")
        #expect(try served.send("PUT /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").status == 405)
        #expect(try served.send("GET /leaflet/../../../../etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").status == 404)
        #expect(try served.send("GET /leaflet/%2e%2e/%2e%2e/etc/passwd HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").status == 404)
        #expect(try served.send("GET /leaflet/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").status == 404)

        #expect(waitUntil { served.harness.console.connectionCount == 0 }, "the connections above are closed")
        let slow = try RawHTTPConnection(port: served.port)
        try slow.send("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        #expect(waitUntil { served.harness.console.connectionCount == 1 }, "the slow one is open")
        served.harness.scheduler.advance(by: 11)
        #expect(try slow.readResponse().status == 408)

        let crowd = try (0..<1000).map { _ in try RawHTTPConnection(port: served.port) }
        for connection in crowd {
            try connection.send("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        }
        var statuses: [Int: Int] = [:]
        for connection in crowd {
            statuses[try connection.readResponse().status, default: 0] += 1
        }
        #expect(statuses.keys.allSatisfy { $0 == 200 || $0 == 503 })
        #expect(statuses.values.reduce(0, +) == 1000)
        #expect(try served.evaluates(latitude: 52.52, time: 3))
        #expect(served.harness.bridge.devices().first?.inside == ["home"])
    }
}
