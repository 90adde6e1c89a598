import Foundation
@testable import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyMQTT
import GeotifyTestSupport
import Testing

/// OwnTracks HTTP mode on the real bridge: a position posted to `/pub` with the
/// tracker's credential goes through the same decoding, lane and outputs as the same
/// position published on `owntracks/<user>/<device>`.
@Suite("OwnTracks HTTP mode of the real bridge", .serialized, .waiting)
struct ConsoleOwnTracksHTTPTests {
    /// `message` as it would read for `alice/mqtt`: the device's name (in topics, `device`
    /// and `id`) is all that may differ between the twins.
    static func asTwin(_ message: MQTTMessage) -> String {
        let text = "\(message.topic) retain=\(message.retain) qos=\(message.qos) \(message.text)"
        return text.replacingOccurrences(of: "alice/http", with: "alice/mqtt")
    }

    /// What the bridge published of `messages` (not the test's `settle` command and its
    /// reply), each as it would read for the twin.
    static func outputs(_ messages: [MQTTMessage]) -> [String] {
        messages.filter { !$0.topic.hasPrefix("geotify/cmd/") && !$0.topic.hasPrefix("geotify/reply/") }.map(asTwin)
    }

    @Test func aPositionPostedToPubNotifiesAsTheSamePositionOverMQTT() throws {
        let console = try ConsoleBridge()
        let path = [(52.50, 13.405), (52.52, 13.405), (52.5163, 13.3777), (52.50, 13.405)]
        for (step, (latitude, longitude)) in path.enumerated() {
            try console.harness.observer.publish("owntracks/alice/mqtt", console.location(latitude, longitude, tst: step + 1))
            let response = try console.post("http", latitude, longitude, tst: step + 1)
            #expect(response.status == 200)
            #expect(response.text == "[]", "answered as the Recorder answers")
        }
        let overMQTT = console.harness.events("alice/mqtt", count: 3)
        let overHTTP = console.harness.events("alice/http", count: 3)
        #expect(overMQTT.map { $0["event"] as? String } == ["enter", "exit", "exit"])
        #expect(overMQTT.map { $0["fence"] as? String } == ["home", "home", "office"])
        try #require(overHTTP.count == 3)
        for (mqtt, http) in zip(overMQTT, overHTTP) {
            #expect(http["device"] as? String == "alice/http")
            #expect((http["id"] as? String)?.replacingOccurrences(of: "alice/http", with: "alice/mqtt") == mqtt["id"] as? String)
            var same = http
            same["device"] = mqtt["device"]
            same["id"] = mqtt["id"]
            #expect(NSDictionary(dictionary: same).isEqual(to: mqtt), "only device and id differ")
        }
        try console.settle("alice/mqtt")
        try console.settle("alice/http")
        let mqttSide = Self.outputs(console.published(for: "alice/mqtt"))
        let httpSide = Self.outputs(console.published(for: "alice/http"))
        #expect(!mqttSide.isEmpty)
        #expect(httpSide == mqttSide, "every output (events, badge, state, tracker) is the twin's")
        #expect(try console.counter("fixes_evaluated") == 8)
    }

    @Test func aPositionTheBridgeRefusesIsRefusedToTheAppWithTheMQTTCode() throws {
        let console = try ConsoleBridge { settings in
            settings.strictDevices = true
        }
        let stranger = try console.post("stranger", 52.52, 13.405, tst: 1)
        #expect(stranger.status == 404)
        #expect(ConsoleBridge.json(stranger)["error"]?["code"] == "unknown_device", "strictDevices: alice/stranger has no fences")
        try console.harness.observer.publish("owntracks/alice/other", console.location(52.52, 13.405, tst: 1))
        #expect(waitUntil { (try? console.counter("errors.unknown_device")) == 2 }, "counted as the same fix over MQTT is")
        #expect(try console.counter("fixes_evaluated") == 0)
        #expect(try console.post("http", 52.52, 13.405, tst: 1).status == 200, "a device with fences is taken")
    }

    @Test func aNewDeviceBeyondTheLimitIsRefusedToTheApp() throws {
        let console = try ConsoleBridge { settings in
            settings.maximumDevicesPerOwner = 1
        }
        #expect(try console.post("first", 52.0, 13.0, tst: 1).status == 200)
        let second = try console.post("second", 52.0, 13.0, tst: 1)
        #expect(second.status == 400)
        #expect(ConsoleBridge.json(second)["error"]?["code"] == "too_many_devices")
        #expect(try console.counter("errors.too_many_devices") == 1)
        #expect(try console.post("http", 52.0, 13.0, tst: 1).status == 200, "a device the fence file names is always admitted")
        #expect(try console.counter("fixes_evaluated") == 2)
    }

    @Test func aSenderTheTopicCannotCarryIsCountedAndReportedAsOverMQTT() throws {
        let console = try ConsoleBridge()
        let long = String(repeating: "d", count: 300)
        let refused = try console.post(long, 52.0, 13.0, tst: 1)
        #expect(refused.status == 400)
        #expect(ConsoleBridge.json(refused)["error"]?["code"] == "invalid_topic")
        #expect(try console.counter("errors.invalid_topic") == 1)
        #expect(console.harness.observer.waitForMessage(on: "geotify/error", where: { $0.text.contains("invalid_topic") }) != nil)
    }

    /// A device another instance owns is refused with its own code and 421 (this instance
    /// cannot answer for it), its position and its command alike, and counted.
    @Test func aDeviceOfAnotherShardIsRefusedWith421OtherShard() throws {
        let owner = ShardAssignment.shard(of: "alice/elsewhere", among: 2)
        let console = try ConsoleBridge { settings in
            settings.shard = try? ShardAssignment(index: 1 - owner, count: 2)
        }
        let refused = try console.post("elsewhere", 52.0, 13.0, tst: 1)
        #expect(refused.status == 421)
        #expect(ConsoleBridge.json(refused)["error"]?["code"] == "other_shard")
        #expect(ConsoleBridge.json(refused)["error"]?["message"]?.stringValue?.contains("another instance of the bridge (instance \(owner) of 2") == true)
        let (status, reply) = try console.command(#"{"action":"list","id":"1"}"#, device: "alice/elsewhere")
        #expect(status == 421)
        #expect(reply["error"]?["code"] == "other_shard")
        #expect(try console.counter("http_refused.other_shard") == 2)
    }
}
