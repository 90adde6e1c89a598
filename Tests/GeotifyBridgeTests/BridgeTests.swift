import Foundation
import Testing
import GeotifyBridge
import GeotifyStore
import GeotifyTestSupport

/// The bridge end to end through a real mosquitto.
@Suite("Bridge through mosquitto", .serialized, .waiting)
struct BridgeTests {
    let away = (52.50, 13.405)
    let home = (52.52, 13.405)

    @Test func ownTracksPositionsProduceNotificationsAndBadges() throws {
        let harness = try BridgeHarness()
        try harness.ownTracks("alice/phone", away.0, away.1, tst: 0)
        try harness.ownTracks("alice/phone", home.0, home.1, tst: 60, acc: nil)
        try harness.ownTracks("alice/phone", home.0, home.1, tst: 120)
        try harness.ownTracks("alice/phone", away.0, away.1, tst: 180)
        let events = harness.events("alice/phone", count: 2)
        try #require(events.count == 2)
        #expect(events[0]["device"] as? String == "alice/phone")
        #expect(events[0]["fence"] as? String == "home")
        #expect(events[0]["event"] as? String == "enter")
        #expect(events[0]["note"] as? String == "Welcome home")
        #expect(events[0]["badge"] as? Int == 1)
        #expect(events[0]["lat"] as? Double == 52.52)
        #expect(events[0]["lon"] as? Double == 13.405)
        #expect(events[0]["acc"] == nil)
        #expect(events[0]["tst"] as? Int == harness.base + 60)
        #expect(events[0]["id"] as? String == "alice/phone/home/enter/\(harness.base + 60)")
        #expect(events[1]["event"] as? String == "exit")
        #expect(events[1]["badge"] as? Int == 2)
        #expect(events[1]["acc"] as? Int == 10)
        let badges = harness.observer.waitForMessages(on: "geotify/badge/alice/phone", count: 3)
        #expect(badges.map(\.text) == ["0", "1", "2"], "0 from the first fix on, then each notification's")
        #expect(badges.allSatisfy(\.retain) == false, "live deliveries are not flagged retained")

        let late = try TestClient(port: harness.broker.port)
        try late.subscribe("geotify/badge/#")
        let retained = late.waitForMessage(on: "geotify/badge/alice/phone")
        #expect(retained?.text == "2")
        #expect(retained?.retain == true)
    }

    @Test func plainPositionsWithMultiLevelDevicesAndAliases() throws {
        let harness = try BridgeHarness()
        try harness.observer.publish("geotify/location/van/7", #"{"latitude": 48.0, "longitude": 11.0, "tst": \#(harness.base)}"#)
        try harness.observer.publish("geotify/location/van/7", #"{"lat": 48.1374, "lon": 11.5755, "acc": 20, "tst": \#(harness.base + 300)}"#)
        let events = harness.events("van/7", count: 1)
        try #require(events.count == 1)
        #expect(events[0]["fence"] as? String == "depot")
        #expect(events[0]["event"] as? String == "enter")
        #expect(events[0]["tst"] as? Int == harness.base + 300)
        #expect(events[0]["acc"] as? Int == 20)
    }

    @Test func eventTypesDecideWhatNotifies() throws {
        let harness = try BridgeHarness()
        let office = (52.5163, 13.3777)
        try harness.ownTracks("alice/phone", away.0, away.1, tst: 1)
        try harness.ownTracks("alice/phone", office.0, office.1, tst: 2)
        try harness.ownTracks("alice/phone", away.0, away.1, tst: 3)
        let events = harness.events("alice/phone", count: 1)
        #expect(events.map { $0["fence"] as? String } == ["office"])
        #expect(events.map { $0["event"] as? String } == ["exit"])
        harness.bridge?.waitUntilIdle()
        #expect(harness.bridge?.counters.value(.transitions) == 2)
        #expect(harness.bridge?.counters.value(.notifications) == 1)
    }

    @Test func nonLocationOwnTracksMessagesAreIgnoredWithoutErrors() throws {
        let harness = try BridgeHarness()
        try harness.observer.publish("owntracks/alice/phone", #"{"_type":"lwt","tst":\#(harness.base)}"#)
        try harness.observer.publish("owntracks/alice/phone", #"{"_type":"transition","event":"enter","desc":"home","lat":52.52,"lon":13.405,"tst":\#(harness.base),"wtst":1,"acc":5,"tid":"ap","t":"c"}"#)
        try harness.observer.publish("owntracks/alice/phone", #"{"_type":"card","name":"Alice"}"#)
        try harness.ownTracks("alice/phone", 1, 1, tst: 5)
        #expect(waitUntil { harness.bridge?.counters.value(.fixesEvaluated) == 1 })
        #expect(harness.bridge?.counters.value(.messagesIgnored) == 3)
        #expect(harness.observer.messages.filter { $0.topic == "geotify/error" }.isEmpty)
    }

    @Test func badInputIsReportedCountedAndTheBridgeKeepsRunning() throws {
        let harness = try BridgeHarness()
        let bad: [(String, [UInt8])] = [
            ("owntracks/alice/phone", Array("not json".utf8)),
            ("owntracks/alice/phone", Array(#"{"_type":"location","lon":13}"#.utf8)),
            ("owntracks/alice/phone", Array(#"{"_type":"location","lat":95,"lon":13}"#.utf8)),
            ("owntracks/alice/phone", Array(#"{"_type":"location","lat":52,"lon":"abc"}"#.utf8)),
            ("owntracks/alice/phone", []),
            ("geotify/location/van/7", Array(repeating: UInt8(ascii: "x"), count: 1 << 20)),
            ("geotify/cmd/alice/phone", Array(#"{"action":"explode"}"#.utf8)),
        ]
        for (topic, payload) in bad { try harness.observer.publish(topic, bytes: payload) }
        let errors = harness.observer.waitForMessages(on: "geotify/error", count: bad.count)
        let parsed = errors.compactMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: String] }
        #expect(parsed.map { $0["error"] ?? "" } == [
            "invalid_json", "missing_field", "out_of_range", "wrong_type", "empty_payload", "payload_too_large", "unknown_action",
        ])
        #expect(parsed[2]["message"] == "lat 95 is outside -90...90")
        #expect(parsed[2]["topic"] == "owntracks/alice/phone")
        #expect(parsed[2]["device"] == "alice/phone")
        #expect(harness.bridge?.counters.value(.errors(.invalidJSON)) == 1)
        #expect(harness.bridge?.counters.value(.errors(.payloadTooLarge)) == 1)
        #expect(harness.logLines.all.contains { $0.contains("refused the message on owntracks/alice/phone: out_of_range: lat 95 is outside -90...90") })

        try harness.ownTracks("alice/phone", away.0, away.1, tst: 10)
        try harness.ownTracks("alice/phone", home.0, home.1, tst: 20)
        #expect(harness.events("alice/phone", count: 1).first?["event"] as? String == "enter")
    }

    @Test func resetBadgeSetsZeroAndRepublishesIt() throws {
        let harness = try BridgeHarness()
        try harness.ownTracks("alice/phone", away.0, away.1, tst: 1)
        try harness.ownTracks("alice/phone", home.0, home.1, tst: 2)
        #expect(harness.observer.waitForMessage(on: "geotify/badge/alice/phone", where: { $0.text == "1" }) != nil)
        try harness.observer.publish("geotify/cmd/alice/phone", #"{"action":"resetBadge"}"#)
        let badges = harness.observer.waitForMessages(on: "geotify/badge/alice/phone", count: 3)
        #expect(badges.map(\.text) == ["0", "1", "0"])
        try harness.ownTracks("alice/phone", away.0, away.1, tst: 3)
        #expect(harness.events("alice/phone", count: 2).last?["badge"] as? Int == 1)
    }

    @Test func stateSurvivesARestartWithoutRepeatsAndWithTheBadge() throws {
        let harness = try BridgeHarness()
        try harness.ownTracks("alice/phone", away.0, away.1, tst: 1)
        try harness.ownTracks("alice/phone", home.0, home.1, tst: 2)
        #expect(harness.events("alice/phone", count: 1).count == 1)
        harness.stopBridge()
        #expect(harness.observer.waitForMessages(on: "geotify/status", count: 2).map(\.text) == ["online", "offline"])

        harness.observer.clear()
        try harness.startBridge()
        let late = try TestClient(port: harness.broker.port)
        try late.subscribe("geotify/badge/alice/phone")
        #expect(late.waitForMessage(on: "geotify/badge/alice/phone")?.text == "1")

        try harness.ownTracks("alice/phone", home.0, home.1, tst: 3)
        try harness.ownTracks("alice/phone", away.0, away.1, tst: 4)
        let events = harness.events("alice/phone", count: 1)
        #expect(events.map { $0["event"] as? String } == ["exit"], "no second entry after the restart")
        #expect(events.first?["badge"] as? Int == 2, "the badge continues from before the restart")
    }

    @Test func messagesLeftInTheOutboxAreSentAtStart() throws {
        let harness = try BridgeHarness(start: false)
        let store = try StateStore(directory: harness.stateDirectory)
        try store.save(devices: [], outbox: [
            OutboxMessage(topic: "geotify/event/alice/phone", payload: Array(#"{"id":"left-over"}"#.utf8), qos: 1, retain: false),
        ])
        try harness.startBridge()
        #expect(harness.observer.waitForMessage(on: "geotify/event/alice/phone")?.text == #"{"id":"left-over"}"#)
        #expect(waitUntil { (try? store.pendingMessages().isEmpty) == true }, "messages handed over leave the outbox")
    }

    @Test func messagesHandedToTheBrokerBeforeACrashAreNotRepeated() throws {
        let harness = try BridgeHarness(start: false)
        let store = try StateStore(directory: harness.stateDirectory)
        let handed = try store.save(devices: [], outbox: [
            OutboxMessage(topic: "geotify/event/alice/phone", payload: Array(#"{"id":"delivered"}"#.utf8), qos: 1, retain: false),
        ])
        try store.watermark.write(OutboxWatermark.Marks(handed: handed[0], acknowledged: handed[0] - 1))
        try store.save(devices: [], outbox: [
            OutboxMessage(topic: "geotify/event/alice/phone", payload: Array(#"{"id":"never-sent"}"#.utf8), qos: 1, retain: false),
        ])
        try harness.startBridge()
        // A transition after the start: the outbox goes out in order, so its notification
        // comes after anything the outbox held, a repeat included.
        try harness.ownTracks("alice/phone", 52.50, 13.405, tst: 0)
        try harness.ownTracks("alice/phone", 52.52, 13.405, tst: 60)
        let sent = harness.events("alice/phone", count: 2)
        #expect(sent.count == 2 && sent.first?["id"] as? String == "never-sent" && sent.last?["event"] as? String == "enter", "\(sent)")
        #expect(harness.observer.messages.filter { $0.topic == "geotify/event/alice/phone" }.count == 2)
        #expect(harness.logLines.all.contains { $0.contains("1 messages were handed to the broker just before the last stop") })
    }

    @Test func strictDevicesRefusesUnknownDevices() throws {
        let harness = try BridgeHarness(strictDevices: true)
        try harness.ownTracks("mallory/phone", 1, 1, tst: 1)
        let error = harness.observer.waitForMessage(on: "geotify/error")
        #expect(error?.text.contains(#""error":"unknown_device""#) == true)
    }

    @Test func anInvalidFenceFileRefusesToStart() throws {
        let harness = try BridgeHarness(fences: #"{"devices": {"a": [{"identifier": "x", "latitude": 95, "longitude": 0, "radius": 10, "eventType": "onEntry"}]}}"#, start: false)
        do {
            try harness.startBridge()
            Issue.record("the bridge started with an invalid fence file")
        } catch let error as StartupError {
            #expect(error.description.contains(#"device "a", fence "x": latitude 95 is outside -90...90"#))
            #expect(error.description.contains(harness.fencesURL.path))
        }
    }
}
