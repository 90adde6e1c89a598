import GeotifyDelivery
import Synchronization
import Testing

/// A queued notification that is not the JSON the bridge writes (a damaged row) is
/// refused for good by the attempt, with a reason naming what is wrong, and nothing is
/// sent for it: no retry can mend it.
@Suite("Unreadable notifications")
struct UnreadableNotificationTests {
    @Test(arguments: [
        (#"{"id":"#, "the notification is not JSON: unexpected end of text, expected a JSON value"),
        ("[1, 2]", "the notification must be a JSON object, not an array"),
        (#"{"device":"alice/phone"}"#, #"the notification has no string "id""#),
        (#"{"id":"a/b/home/teleport/1","device":"a/b","fence":"home","event":"teleport","note":"x"}"#,
         #"the notification's event "teleport" is not enter, exit or dwell"#),
        (#"{"id":"a/b/home/enter/1","device":"a/b","fence":"home","event":"enter","note":"x","badge":1.5}"#,
         "the notification's badge must be a whole number from 0"),
        (#"{"id":"a/b/home/enter/1","device":"a/b","fence":"home","event":"enter","note":"x","badge":-1}"#,
         "the notification's badge must be a whole number from 0"),
    ])
    func aDamagedNotificationIsRejectedWithoutBeingSent(payload: String, reason: String) {
        let transport = CountingTransport()
        let outcome = Samples.webhook(url: "http://127.0.0.1:9/hook").attempt(Array(payload.utf8), at: Samples.now, through: transport)
        #expect(outcome == .rejected(reason: "the queued notification is unreadable: \(reason)"))
        #expect(transport.count == 0)
    }

    /// The same target sends a notification the bridge wrote.
    @Test func aNotificationTheBridgeWroteIsSent() {
        let transport = CountingTransport()
        let outcome = Samples.webhook(url: "http://127.0.0.1:9/hook").attempt(Samples.entry(target: "hook").payload, at: Samples.now, through: transport)
        #expect(transport.count == 1)
        #expect(outcome == .delivered(answer: "HTTP 200"))
    }
}

/// A transport that answers 200 to everything and counts the requests.
private final class CountingTransport: DeliveryTransport {
    private let requests = Atomic(0)

    var count: Int { requests.load(ordering: .relaxed) }

    func perform(_ request: DeliveryRequest, timeout: Double, caFile: String?) -> TransportResponse {
        requests.add(1, ordering: .relaxed)
        return .http(status: 200, retryAfter: nil, body: [])
    }
}
