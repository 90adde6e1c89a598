import Foundation
@testable import geotify
import GeotifyDelivery
import GeotifyStore
import GeotifyTestSupport
import Testing

@Suite("geotify notify")
struct NotifyCommandTests {
    @Test func testSendsASampleAndReportsTheAnswer() throws {
        let server = try TestHTTPServer { _ in .init(status: 202, body: #"{"received":true}"#) }
        defer { server.stop() }
        let target = Target(name: "hook", destination: .webhook(WebhookDestination(url: server.url, secret: Secret(value: "k", source: "env K"))))
        let outcome = NotifyCommand.test(target, at: 1_700_000_000.7, through: CurlTransport())
        #expect(NotifyCommand.describe(outcome) == #"delivered: HTTP 202: {"received":true}"#)
        let request = try #require(server.requests.first)
        #expect(request.headers["idempotency-key"] == "geotify-test/test/enter/1700000000")
        #expect(request.text.contains(#""note":"A test notification from Geotify.""#))
    }

    @Test func statusIsATableOfCountsWithTheLastError() {
        var hook = DeliveryCounts(target: "backend")
        hook.delivered = 1204
        hook.retrying = 2
        hook.lastError = "HTTP 503: maintenance"
        hook.lastErrorAt = 1_700_000_000
        var phone = DeliveryCounts(target: "phone")
        phone.delivered = 7
        phone.dead = 1000
        phone.refused = 12
        phone.pruned = 8999
        #expect(NotifyCommand.table([hook, phone]) == """
            target   delivered  pending  retrying  dead  refused  pruned  last error
            backend       1204        0         2     0        0       0  2023-11-14T22:13:20Z HTTP 503: maintenance
            phone            7        0         0  1000       12    8999  -

            """)
        #expect(NotifyCommand.table([]) == "no deliveries yet\n")
        #expect(NotifyCommand.describe(.failed(reason: "HTTP 429", retryAfter: 30)) == "failed, would be retried after 30 s: HTTP 429")
        #expect(NotifyCommand.describe(.rejected(reason: "HTTP 401")) == "refused, would be dead-lettered: HTTP 401")
    }

    @Test func retryAndStatusWorkOnTheStateDatabase() throws {
        #expect(throws: UsageError.self) { try NotifyCommand.run(["retry", "--state-dir", "/nonexistent"]) }
        #expect(try NotifyCommand.run(["status", "--state-dir", "/nonexistent/state"]) == 1)
        let directory = try makeTemporaryDirectory("notify-cli")
        let queue = try DeliveryQueue(path: directory.appendingPathComponent("state.sqlite").path)
        try queue.enqueue([DeliveryEntry(target: "hook", device: "d", eventID: "e", payload: Array("{}".utf8))], at: 1)
        try queue.moveToDeadLetters(try #require(try queue.heads().first).id, reason: "gave up", at: 2)
        #expect(try NotifyCommand.run(["status", "--state-dir", directory.path, "--json"]) == 0)
        #expect(try NotifyCommand.run(["retry", "all", "--state-dir", directory.path]) == 0)
        #expect(try queue.counts().first?.pending == 1)
    }
}
