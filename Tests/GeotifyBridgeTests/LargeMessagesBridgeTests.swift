import Foundation
import GeotifyBridge
import GeotifyTestSupport
import Testing

/// A broker that takes packets of at most `max_packet_size` (`config/mosquitto.conf`:
/// 256 KiB) closes the connection of a client that publishes a larger one, and
/// libmosquitto sends the message again on reconnecting. A `get` of a polygon fence with
/// many corners, or a notification with a long note, made such a message: the bridge was
/// thrown off the broker every few seconds for good (its log blamed a second bridge with
/// its client id), and no device's notification went out. Now nothing larger than
/// `maximumPacketBytes` is published.
@Suite("Messages larger than the broker takes", .serialized, .waiting)
struct LargeMessagesBridgeTests {
    /// A fence file where `alice/phone` has a polygon of 4 000 corners (about 100 KB of
    /// JSON), `van/7` a fence whose note is 70 000 bytes, and `bob/phone` a plain one.
    static let fences: String = {
        let corners = (0..<4_000).map { index -> String in
            let angle = 2 * Double.pi * Double(index) / 4_000
            return String(format: "[%.7f,%.7f]", 13.405 + 0.003 * cos(angle), 52.52 + 0.002 * sin(angle))
        }
        let note = String(repeating: "n", count: 70_000)
        return """
            { "devices": {
                "alice/phone": [ { "identifier": "park", "polygon": [\(corners.joined(separator: ","))], "eventType": "onEntry" } ],
                "van/7": [ { "identifier": "depot", "latitude": 48.1374, "longitude": 11.5755, "radius": 250,
                             "note": "\(note)", "eventType": "onEntry" } ],
                "bob/phone": [ { "identifier": "home", "latitude": 51.0, "longitude": 8.0, "radius": 200, "eventType": "onEntry" } ] } }
            """
    }()

    func reply(_ harness: BridgeHarness, _ id: String) -> [String: Any]? {
        guard let message = harness.observer.waitForMessage(on: "geotify/reply/alice/phone", where: { $0.text.contains(#""id":"\#(id)""#) })
        else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]
    }

    @Test func nothingLargerThanTheBrokerTakesIsPublishedAndTheBridgeStaysConnected() throws {
        let harness = try BridgeHarness(fences: Self.fences, brokerConfig: "max_packet_size 65536") { $0.maximumPacketBytes = 65_536 }
        // The fence's 4 000 corners are the whole answer to a get: refused, nothing changed.
        try harness.observer.publish("geotify/cmd/alice/phone", #"{"id":"g","action":"get","fence":"park"}"#)
        let get = try #require(reply(harness, "g"), "the get was answered: \(harness.logLines.all.suffix(5))")
        #expect(get["ok"] as? Bool == false)
        #expect((get["error"] as? [String: Any])?["code"] as? String == "message_too_large")
        // An edit of it is made, and answered without the fence and its previous form.
        try harness.observer.publish("geotify/cmd/alice/phone", #"{"id":"e","action":"edit","fence":"park","changes":{"note":"Park"}}"#)
        let edit = try #require(reply(harness, "e"))
        #expect(edit["ok"] as? Bool == true)
        #expect(edit["omitted"] as? [String] == ["fence", "previous"])
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: harness.fencesURL)) as? [String: Any]
        let park = ((file?["devices"] as? [String: Any])?["alice/phone"] as? [[String: Any]])?.first
        #expect(park?["note"] as? String == "Park", "the edit was written")

        // The van's notification, with its 70 000-byte note, is not published but
        // reported (so was the Home Assistant config of its presence, which names the
        // note, at the start); the next device's is.
        try harness.ownTracks("van/7", 48.2, 11.5755, tst: 0)
        try harness.ownTracks("van/7", 48.1374, 11.5755, tst: 1)
        let reports = { (topic: String) in
            harness.observer.waitForMessage(on: "geotify/error") { $0.text.contains(#""error":"message_too_large""#) && $0.text.contains(topic) }
        }
        #expect(reports(#""topic":"geotify/event/van/7""#) != nil)
        #expect(reports(#""topic":"homeassistant/binary_sensor/geotify_van_7_"#) != nil)
        try harness.ownTracks("bob/phone", 51.05, 8.0, tst: 2)
        try harness.ownTracks("bob/phone", 51.0, 8.0, tst: 3)
        #expect(harness.events("bob/phone", count: 1).count == 1, "the bridge still publishes: \(harness.logLines.all.suffix(5))")
        #expect(harness.observer.messages.filter { $0.topic == "geotify/event/van/7" }.isEmpty)
        #expect(!harness.logLines.all.contains { $0.contains("lost the connection") || $0.contains("taken over") })
        #expect(!harness.broker.log.contains("oversize"), "the broker never closed the connection")
    }
}
