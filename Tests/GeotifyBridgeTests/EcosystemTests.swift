import Foundation
import Testing
import GeotifyBridge
import GeotifyJSON
import GeotifyMQTT
import GeotifyTestSupport
import GeotifyTime

/// Home Assistant discovery, OwnTracks transitions, presence and occupancy, and the
/// statistics, through a real mosquitto, seen as Home Assistant and OwnTracks see them.
@Suite("Home Assistant, OwnTracks and presence through mosquitto", .serialized, .waiting)
struct EcosystemTests {
    static let fences = """
        { "devices": {
            "alice/phone": [
              { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
                "note": "Welcome home", "eventType": "onEntryAndExit" } ],
            "bob/phone": [] },
          "groups": { "family": ["alice/phone", "bob/phone"] },
          "shared": [
            { "identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150,
              "note": "At school", "eventType": "onEntryAndExit", "group": "family" } ] }
        """
    static let school = (52.53, 13.38)
    static let away = (52.50, 13.405)

    func object(_ message: MQTTMessage?) -> [String: Any]? {
        message.flatMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
    }

    @Test func homeAssistantSeesEveryEntityWithTheKeysItRequires() throws {
        // The fence file is looked at every second of the bridge's clock: the test moves it on.
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(fences: Self.fences, start: false, clock: clock)
        let homeAssistant = try TestClient(port: harness.broker.port)
        try homeAssistant.subscribe("homeassistant/#")
        try harness.startBridge()
        // The bridge: connectivity and six statistics; alice: tracker, badge, button, event
        // + home + school; bob: the four + school; the family's shared set: school's
        // occupancy count and occupied sensor.
        let configs = homeAssistant.waitForMessages(on: "homeassistant/#", count: 20)
        try #require(configs.count == 20)
        let late = try TestClient(port: harness.broker.port)
        try late.subscribe("homeassistant/#")
        let retained = late.waitForMessages(on: "homeassistant/#", count: 20)
        #expect(retained.count == 20 && retained.allSatisfy(\.retain), "the configs are retained for a Home Assistant that starts later")
        let discovery = HomeAssistantDiscovery(topics: Topics())
        let nodes = Set(configs.map { String($0.topic.split(separator: "/")[2]) })
        #expect(nodes == [
            discovery.bridgeNodeID, discovery.nodeID(of: "alice/phone"), discovery.nodeID(of: "bob/phone"), discovery.sharedNodeID(of: "family"),
        ])
        for config in configs {
            let parts = config.topic.split(separator: "/")
            #expect(parts.count == 5 && parts[0] == "homeassistant" && parts[4] == "config", "\(config.topic)")
            let payload = try #require(try JSONParser().parse(config.payload).objectValue)
            #expect(HomeAssistantSchema.problems(String(parts[1]), payload) == [], "\(config.topic)")
        }

        homeAssistant.clear()
        try homeAssistant.publish("homeassistant/status", "online")
        #expect(homeAssistant.waitForMessages(on: "homeassistant/#", count: 20).count >= 20, "re-announced when Home Assistant comes online")

        // The start's sweep ends its reading 0.2 s of the bridge's clock after its
        // subscriptions are acknowledged, and its judgement waits for the announcer: both
        // moved on here, so that it judges what it read with the fences of the start and
        // the edit below is the announcer's alone to act on (judged after the edit, bob's
        // configs would be cleared twice).
        #expect(waitUntil(advancing: clock, by: 0.1) {
            harness.bridge?.sweepHasCollected == true && harness.bridge?.outboundDrained == true
        })
        homeAssistant.clear()
        try """
            { "devices": {
                "alice/phone": [
                  { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
                    "note": "Welcome home", "eventType": "onEntryAndExit" } ] },
              "groups": { "family": ["alice/phone"] },
              "shared": [
                { "identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150,
                  "note": "At school", "eventType": "onEntryAndExit", "group": "family" } ] }
            """.write(to: harness.fencesURL, atomically: true, encoding: .utf8)
        #expect(waitUntil(advancing: clock, by: 1) { harness.bridge?.fenceBook.knows("bob/phone") == false }, "the edited file is valid and in force")
        let removals = homeAssistant.waitForMessages(on: "homeassistant/#", count: 5).filter(\.payload.isEmpty)
        #expect(removals.count == 5, "bob's four entities and his school sensor are removed with empty configs")
        #expect(removals.allSatisfy { $0.topic.contains("bob_phone") })
    }

    @Test func ownTracksDevicesGetOwnTracksTransitions() throws {
        let harness = try BridgeHarness(fences: Self.fences)
        try harness.observer.subscribe("owntracks/alice/phone/event")
        try harness.ownTracks("alice/phone", Self.away.0, Self.away.1, tst: 0)
        try harness.ownTracks("alice/phone", 52.52, 13.405, tst: 60, acc: 8)
        let transition = try #require(object(harness.observer.waitForMessage(on: "owntracks/alice/phone/event")))
        #expect(transition["_type"] as? String == "transition")
        #expect(transition["event"] as? String == "enter")
        #expect(transition["desc"] as? String == "home")
        #expect(transition["rid"] as? String == "home")
        #expect(transition["t"] as? String == "c")
        #expect(transition["tid"] as? String == "ne")
        #expect(transition["lat"] as? Double == 52.52)
        #expect(transition["lon"] as? Double == 13.405)
        #expect(transition["acc"] as? Int == 8)
        #expect(transition["tst"] as? Int == harness.base + 60)
        #expect(transition["wtst"] is Int)
        try harness.ownTracks("alice/phone", Self.away.0, Self.away.1, tst: 120)
        let leave = object(harness.observer.waitForMessages(on: "owntracks/alice/phone/event", count: 2).last)
        #expect(leave?["event"] as? String == "leave")

        try harness.observer.publish("geotify/location/alice/phone", #"{"lat":52.52,"lon":13.405,"tst":\#(harness.base + 180)}"#)
        #expect(harness.events("alice/phone", count: 3).count == 3)
        #expect(harness.observer.waitForMessages(on: "owntracks/alice/phone/event", count: 3, timeout: 1).count == 3,
                "a device known as an OwnTracks device keeps getting transitions")
    }

    @Test func presenceAndOccupancyFollowTransitions() throws {
        let harness = try BridgeHarness(fences: Self.fences)
        try harness.ownTracks("alice/phone", Self.away.0, Self.away.1, tst: 0)
        try harness.ownTracks("bob/phone", Self.away.0, Self.away.1, tst: 0)
        // The count announced on connecting, then both first fixes handled, before the next
        // fix is sent: an announcement made after alice entered would rightly say 1.
        #expect(harness.observer.waitForMessage(on: "geotify/occupancy/family/school")?.text == "0")
        #expect(harness.observer.waitForMessage(on: "geotify/presence/alice/phone/school")?.text == "outside")
        #expect(harness.observer.waitForMessage(on: "geotify/presence/bob/phone/school")?.text == "outside")
        try harness.ownTracks("alice/phone", Self.school.0, Self.school.1, tst: 60)
        #expect(harness.observer.waitForMessages(on: "geotify/occupancy/family/school", count: 2).map(\.text) == ["0", "1"], "0 from the start, not nothing")
        #expect(harness.observer.waitForMessages(on: "geotify/presence/alice/phone/school", count: 2).map(\.text) == ["outside", "inside"])
        #expect(harness.observer.waitForMessage(on: "geotify/tracker/alice/phone", where: { $0.text == "school" }) != nil)
        let state = try #require(object(harness.observer.waitForMessage(on: "geotify/state/alice/phone", where: { $0.text.contains("At school") })))
        #expect((state["inside"] as? [[String: Any]])?.first?["fence"] as? String == "school")
        #expect((state["inside"] as? [[String: Any]])?.first?["note"] as? String == "At school")
        #expect(state["latitude"] as? Double == Self.school.0)
        #expect(state["badge"] as? Int == 1)

        try harness.ownTracks("bob/phone", Self.school.0, Self.school.1, tst: 60)
        #expect(harness.observer.waitForMessages(on: "geotify/occupancy/family/school", count: 3).map(\.text) == ["0", "1", "2"])
        try harness.ownTracks("alice/phone", Self.away.0, Self.away.1, tst: 120)
        #expect(harness.observer.waitForMessages(on: "geotify/occupancy/family/school", count: 4).map(\.text) == ["0", "1", "2", "1"])
        #expect(harness.observer.waitForMessages(on: "geotify/presence/alice/phone/school", count: 3).last?.text == "outside")
        #expect(harness.observer.waitForMessages(on: "geotify/tracker/alice/phone", count: 3).map(\.text) == ["not_home", "school", "not_home"])

        let late = try TestClient(port: harness.broker.port)
        try late.subscribe("geotify/occupancy/#")
        #expect(late.waitForMessage(on: "geotify/occupancy/family/school")?.text == "1", "retained for Home Assistant's zone")
    }

    @Test func changedFencesArePushedToTheOwnTracksAppWhenAskedTo() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(fences: Self.fences, start: false, clock: clock, configure: { $0.ownTracksWaypoints = true })
        try harness.observer.subscribe("owntracks/alice/phone/cmd")
        try harness.startBridge()
        try Self.fences.replacingOccurrences(of: #""radius": 100"#, with: #""radius": 120"#)
            .write(to: harness.fencesURL, atomically: true, encoding: .utf8)
        #expect(waitUntil(advancing: clock, by: 1) { harness.observer.messages.contains { $0.topic == "owntracks/alice/phone/cmd" } })
        let command = try #require(object(harness.observer.messages.first { $0.topic == "owntracks/alice/phone/cmd" }))
        #expect(command["_type"] as? String == "cmd")
        #expect(command["action"] as? String == "setWaypoints")
        let waypoints = (command["waypoints"] as? [String: Any])?["waypoints"] as? [[String: Any]]
        #expect(waypoints?.first?["desc"] as? String == "home")
        #expect(waypoints?.first?["rad"] as? Int == 120)
    }

    @Test func statisticsArePublishedRetained() throws {
        // Reports come every 10 s of the bridge's clock, which the test moves on.
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(start: false, clock: clock, configure: { $0.statsInterval = 10 })
        try harness.startBridge()
        try harness.ownTracks("alice/phone", Self.away.0, Self.away.1, tst: 0)
        try harness.observer.publish("owntracks/alice/phone", "garbage")
        #expect(waitUntil(advancing: clock, by: 1) { harness.observer.messages.contains { $0.topic == "geotify/stats" && $0.text.contains(#""invalid_json":1"#) } })
        let stats = try #require(object(harness.observer.messages.last { $0.topic == "geotify/stats" }))
        #expect(stats["fences"] as? Int == 3)
        let counters = try #require(stats["counters"] as? [String: Any])
        #expect(counters["messages_received"] as? Int == 2)
        #expect(counters["fixes_evaluated"] as? Int == 1)
    }
}
