import Foundation
@testable import GeotifyBridge
import GeotifyJSON
import GeotifyTestSupport
import Testing

/// Hostile HTTP at the real bridge's console while positions keep arriving over MQTT:
/// each gets its clear status and counter, and the lanes go on evaluating (a
/// notification comes during the slow client and during the crowd of connections).
@Suite("Hostile HTTP at the real bridge", .serialized, .waiting)
struct ConsoleAbuseBridgeTests {
    /// Sends `raw` on a connection of its own and reads the answer.
    func send(_ raw: String, to console: ConsoleBridge) throws -> RawHTTPConnection.Response {
        let connection = try RawHTTPConnection(port: console.port)
        try connection.send(raw)
        return try connection.readResponse()
    }

    /// The error code of a refusal's body.
    func code(_ response: RawHTTPConnection.Response) -> String? {
        ConsoleBridge.json(response)["error"]?["code"]?.stringValue
    }

    @Test func hostileRequestsGetClearStatusesWhileTheBridgeKeepsEvaluating() throws {
        let console = try ConsoleBridge(http: ["maximumBodyBytes": 4096, "headerTimeout": 10])
        let observer = console.harness.observer
        try observer.publish("owntracks/van/7", console.location(48.0, 11.0, tst: 1))

        let oversized = try send("POST /pub HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n", to: console)
        #expect(oversized.status == 413)
        #expect(code(oversized) == "payload_too_large")
        let post = "POST /pub HTTP/1.1\r\nHost: t\r\nAuthorization: Basic \(Data("alice:s3cret".utf8).base64EncodedString())\r\nX-Limit-D: http\r\nContent-Type: application/json\r\nConnection: close\r\n"
        let badJSON = try send(post + "Content-Length: 5\r\n\r\n{nope", to: console)
        #expect(badJSON.status == 400)
        #expect(code(badJSON) == "invalid_json")
        #expect(observer.waitForMessage(on: "geotify/error", where: { $0.text.contains("invalid_json") && $0.text.contains("alice/http") }) != nil,
                "reported on geotify/error as a bad position over MQTT is")
        let tooDeep = try send(post + "Content-Length: 40\r\n\r\n" + String(repeating: "[", count: 40), to: console)
        #expect(tooDeep.status == 400)
        #expect(try send("PUT /api/state HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", to: console).status == 405)
        #expect(try send("DELETE /pub HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", to: console).status == 405)
        let admin = "Authorization: Basic \(Data("admin:s3cret".utf8).base64EncodedString())\r\n"
        for path in ["/leaflet/../../../../etc/passwd", "/leaflet/%2e%2e/%2e%2e/etc/passwd", "/leaflet/", "/../../etc/passwd"] {
            let response = try send("GET \(path) HTTP/1.1\r\nHost: t\r\n\(admin)Connection: close\r\n\r\n", to: console)
            #expect(response.status == 404, "\(path)")
            #expect(!response.text.contains("root:"), "\(path)")
        }

        // A slow client holds a connection without finishing its header; positions go on.
        #expect(waitUntil { (try? console.bridge.consoleConnections) == 0 }, "the connections above are closed")
        let slow = try RawHTTPConnection(port: console.port)
        try slow.send("GET /api/state HTTP/1.1\r\nHost: t\r\n")
        #expect(waitUntil { (try? console.bridge.consoleConnections) == 1 }, "the slow one is open")
        try observer.publish("owntracks/van/7", console.location(48.1374, 11.5755, tst: 2))
        let entered = console.harness.events("van/7", count: 1).first?["event"] as? String
        #expect(entered == "enter")
        console.clock.advance(by: 11)
        let timedOut = try slow.readResponse()
        #expect(timedOut.status == 408)
        #expect(code(timedOut) == "header_timeout")

        // A thousand connections at once, beyond `maximumConnections`; positions go on.
        let crowd = try (0..<1000).map { _ in try RawHTTPConnection(port: console.port, timeout: 60) }
        for connection in crowd {
            try connection.send("GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        }
        try observer.publish("owntracks/van/7", console.location(48.0, 11.0, tst: 3))
        let left = console.harness.events("van/7", count: 2).last?["event"] as? String
        #expect(left == "exit")
        var statuses: [Int: Int] = [:]
        for connection in crowd {
            do {
                statuses[try connection.readResponse().status, default: 0] += 1
            } catch {
                statuses[0, default: 0] += 1
            }
        }
        if statuses[0] != nil {
            Issue.record("\(statuses[0] ?? 0) connections got no answer; libmicrohttpd said: \(console.harness.logLines.all.filter { $0.contains("libmicrohttpd") }.suffix(5))")
        }
        #expect(Set(statuses.keys).isSubset(of: [200, 503]))
        #expect(statuses.values.reduce(0, +) == 1000)

        // HTTP mode still works, and every refusal was counted.
        #expect(try console.post("http", 52.50, 13.405, tst: 4).status == 200)
        #expect(try console.post("http", 52.52, 13.405, tst: 5).status == 200)
        let arrived = console.harness.events("alice/http", count: 1).first?["event"] as? String
        #expect(arrived == "enter")
        let counters = try console.bridge.counters.snapshot
        #expect(counters["http_refused.payload_too_large"] == 1)
        #expect(counters["http_refused.invalid_json"] == 2)
        #expect(counters["errors.invalid_json"] == 2, "the lanes counted the bad bodies as the MQTT path counts bad payloads")
        #expect(counters["http_refused.method_not_allowed"] == 2)
        #expect(counters["http_refused.not_found"] == 4)
        #expect(counters["http_refused.header_timeout"] == 1)
        #expect((counters["http_refused.too_many_connections"] ?? 0) == (statuses[503] ?? 0))
        #expect((counters["http_responses.200"] ?? 0) >= (statuses[200] ?? 0))
        #expect(counters["fixes_evaluated"] == 5)
    }
}
