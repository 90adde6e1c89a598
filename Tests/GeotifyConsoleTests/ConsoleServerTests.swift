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

    /// The server lets go of an answer once it is sent, so its slot among the user's
    /// unsent large answers comes back: more states than the bound, each read, are served.
    @Test func answersReadWholeGiveTheirSlotsBack() throws {
        let served = try Served()
        for _ in 0..<(3 * Console.maximumUnsentAnswers) {
            #expect(try served.send("GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").status == 200)
        }
        #expect(waitUntil { served.harness.console.unsent.unsent("") == 0 })
    }

    @Test func hostileRequestsGetClearStatusesAndPositionsAreStillEvaluated() throws {
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
