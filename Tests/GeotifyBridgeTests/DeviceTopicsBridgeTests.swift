import Foundation
import Synchronization
import Testing
@testable import GeotifyBridge
import GeotifyTestSupport

/// `deviceTopics` through a real mosquitto: what only a broker can show, that a start
/// which leaves topics out removes what an earlier start left retained there.
@Suite("Device topics through mosquitto", .serialized, .waiting)
struct DeviceTopicsBridgeTests {
    @Test func aStartWithFewerTopicsClearsWhatTheBrokerRetainedOfTheOthers() throws {
        let kept = Mutex(DeviceTopic.allCases)
        let harness = try BridgeHarness { settings in
            settings.homeAssistantEnabled = false
            settings.deviceTopics = kept.withLock { $0 }
        }
        let left = ["geotify/presence/alice/phone/home", "geotify/presence/alice/phone/office",
                    "geotify/tracker/alice/phone", "geotify/badge/alice/phone"]
        try harness.ownTracks("alice/phone", 52.52, 13.405, tst: 0)
        for topic in left + ["geotify/state/alice/phone"] {
            #expect(harness.observer.waitForMessage(on: topic) != nil, "\(topic) published while all four are kept")
        }
        #expect(retained(on: harness).keys.sorted() == (left + ["geotify/state/alice/phone"]).sorted())

        harness.stopBridge()
        kept.withLock { $0 = [.state] }
        try harness.startBridge()
        for topic in left {
            #expect(harness.observer.waitForMessage(on: topic, where: { $0.payload.isEmpty }) != nil, "\(topic) cleared after the connection")
        }
        let after = retained(on: harness)
        #expect(after.keys.sorted() == ["geotify/state/alice/phone"], "only the state document is left retained")
        #expect(after["geotify/state/alice/phone"]?.contains(#""tracker":"home""#) == true)
    }

    /// The retained messages of alice/phone a new subscriber gets: everything the broker
    /// sends for its subscription before a message it publishes itself afterwards.
    private func retained(on harness: BridgeHarness) -> [String: String] {
        guard let late = try? TestClient(port: harness.broker.port) else { return [:] }
        defer { late.disconnect() }
        let barrier = "geotify/barrier/\(UUID().uuidString)"
        guard (try? late.subscribe("geotify/#")) != nil, (try? late.publish(barrier, "end")) != nil,
              late.waitForMessage(on: barrier) != nil else { return [:] }
        var found: [String: String] = [:]
        for message in late.messages where message.retain && message.topic.contains("/alice/phone") {
            found[message.topic] = message.text
        }
        return found
    }
}
