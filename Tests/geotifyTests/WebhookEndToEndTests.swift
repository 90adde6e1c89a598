import Foundation
import GeotifyTestSupport
import Testing

/// The documentation's webhook example end to end: a `webhook` target in the settings
/// file, its secret in a file, `geotify run`, a fix entering a fence, and the receiver
/// checking the POST with the Python `verify` of docs/notifications.md, run as printed.
@Suite("A webhook through geotify run", .waiting)
struct WebhookEndToEndTests {
    /// The Python block under "Verifying a webhook in Python" in docs/notifications.md.
    static func documentedVerify() throws -> String {
        let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/notifications.md")
        let text = try String(contentsOf: docs, encoding: .utf8)
        guard let section = text.range(of: "Verifying a webhook in Python"),
              let start = text.range(of: "```python\n", range: section.upperBound..<text.endIndex),
              let end = text.range(of: "```", range: start.upperBound..<text.endIndex)
        else { throw TestSupportError("docs/notifications.md has no Python block for verifying a webhook") }
        return String(text[start.upperBound..<end.lowerBound])
    }

    /// What the documented `verify` says of `body` with the signature header `header`.
    static func verify(header: String, body: [UInt8], in directory: URL) throws -> String {
        let bodyFile = directory.appendingPathComponent("body-\(UUID().uuidString)")
        try Data(body).write(to: bodyFile)
        let script = try documentedVerify() + """

            import sys
            secret = open(sys.argv[1], "rb").read().rstrip(b"\\n")
            print(verify(secret, sys.argv[2], open(sys.argv[3], "rb").read()))
            """
        return try runCommand(testPython, ["-c", script, directory.appendingPathComponent("webhook.secret").path, header, bodyFile.path])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aFixEnteringAFencePostsTheSignedNotificationThatPythonVerifies() throws {
        let scenario = try DeliveryScenario("delivery-webhook", devices: 1)
        let receiver = try WebhookReceiver()
        let bridge = try scenario.startBridge("hooked", extra: DeliveryScenario.notify(
            DeliveryScenario.webhook("backend", url: receiver.url("/geotify"), #""events": ["enter"]"#)))
        let device = scenario.devices[0]
        try scenario.publish(device, step: 0)
        try scenario.publish(device, step: 1)
        try scenario.publish(device, step: 2)

        #expect(waitUntil { scenario.notifications(of: bridge).count == 2 })
        #expect(waitUntil { (try? scenario.deliveries(of: bridge)["backend"]?.delivered) == 1 })
        let entered = try #require(scenario.notifications(of: bridge).first)
        #expect(entered.id == scenario.eventID(device, step: 1))
        #expect(receiver.exchanges.count == 1, "the exit is filtered out")
        let post = try #require(receiver.exchanges.first?.request)
        #expect(post.method == "POST" && post.path == "/geotify")
        #expect(post.headers["content-type"] == "application/json")
        #expect(post.headers["idempotency-key"] == entered.id)
        #expect(post.body == entered.payload, "the notification JSON exactly as published on MQTT")
        let signature = try #require(post.headers["geotify-signature"])
        #expect(try Self.verify(header: signature, body: post.body, in: scenario.directory) == "True")
        #expect(try Self.verify(header: signature, body: post.body + Array(" ".utf8), in: scenario.directory) == "False")
        let log = try String(contentsOf: bridge.logURL, encoding: .utf8)
        #expect(!log.contains(DeliveryScenario.secret), "the secret is never logged")
    }
}
