import Foundation
import Testing
import GeotifyBridge
import GeotifyTestSupport
import GeotifyTime

/// Managing fences over MQTT through a real mosquitto: the app's list, Add/Edit,
/// Delete... (Cancel / Delete) and Peek & Pop, all written to the fence file.
@Suite("Fence commands through mosquitto", .serialized, .waiting)
struct FenceCommandTests {
    /// Sends `request` (a JSON object text without braces' id) for `device` and returns
    /// the reply with the same correlation id.
    func send(_ harness: BridgeHarness, _ request: String, device: String = "alice/phone") throws -> [String: Any] {
        let id = UUID().uuidString
        let body = request.dropFirst().dropLast()
        try harness.observer.publish("geotify/cmd/\(device)", #"{"id":"\#(id)",\#(body)}"#)
        var reply: [String: Any]?
        _ = waitUntil {
            reply = harness.observer.messages.lazy.filter { $0.topic == "geotify/reply/\(device)" }
                .compactMap { try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
                .first { $0["id"] as? String == id }
            return reply != nil
        }
        guard let reply else { throw TestSupportError("no reply to \(request)") }
        return reply
    }

    func fileFences(_ harness: BridgeHarness, _ device: String = "alice/phone") throws -> [[String: Any]] {
        let object = try JSONSerialization.jsonObject(with: Data(contentsOf: harness.fencesURL)) as? [String: Any]
        return ((object?["devices"] as? [String: Any])?[device] as? [[String: Any]]) ?? []
    }

    func error(_ reply: [String: Any]) -> String? {
        (reply["error"] as? [String: Any])?["code"] as? String
    }

    /// Commands that arrive together are one batch whose fence writes are made at its
    /// end; a command must still see what the commands before it for that device did.
    @Test func commandsSentBackToBackEachSeeTheFencesAsTheCommandsBeforeThemLeftThem() throws {
        let harness = try BridgeHarness()
        for index in 0..<8 {
            let fence = #"{"identifier":"f\#(index)","latitude":52.5,"longitude":13.41,"radius":100,"eventType":"onEntry"}"#
            for body in [
                #"{"id":"a\#(index)","action":"add","fence":\#(fence)}"#,
                #"{"id":"g\#(index)","action":"get","fence":"f\#(index)"}"#,
                #"{"id":"p\#(index)","action":"preview","change":{"action":"edit","fence":"f\#(index)","changes":{"radius":150}}}"#,
            ] {
                try harness.observer.publish("geotify/cmd/alice/phone", body, qos: 0)
            }
        }
        let replies = harness.observer.waitForMessages(on: "geotify/reply/alice/phone", count: 24).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
        }
        #expect(replies.count == 24)
        let refused = replies.filter { $0["ok"] as? Bool != true }.map { "\($0["id"] ?? "?"): \(error($0) ?? "?")" }
        #expect(refused.isEmpty, "every get and preview found the fence added just before it: \(refused)")
    }

    /// A flood of one device's fence changes through the broker, on the test's clock (which
    /// sees no write take time, so each counts the least, a millisecond): changes start
    /// while the device has writing time left (`fenceWriteBudget`), the rest are refused
    /// as `rate_limited` without touching the file, and the clock gives time back.
    @Test func aFloodOfOneDevicesChangesIsCutAtItsWritingTimeUntilTheClockGivesItBack() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock) { $0.fenceWriteBudget = 0.0045 }
        for index in 0..<12 {
            let fence = #"{"identifier":"f\#(index)","latitude":52.5,"longitude":13.41,"radius":100,"eventType":"onEntry"}"#
            try harness.observer.publish("geotify/cmd/alice/phone", #"{"id":"c\#(index)","action":"add","fence":\#(fence)}"#, qos: 0)
        }
        let replies = harness.observer.waitForMessages(on: "geotify/reply/alice/phone", count: 12).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
        }
        #expect(replies.count == 12)
        #expect(replies.filter { $0["ok"] as? Bool == true }.compactMap { $0["id"] as? String } == ["c0", "c1", "c2", "c3", "c4"])
        #expect(replies.filter { $0["ok"] as? Bool != true }.map(error) == Array(repeating: "rate_limited", count: 7))
        #expect(try fileFences(harness).compactMap { $0["identifier"] as? String } == ["home", "office", "f0", "f1", "f2", "f3", "f4"])

        clock.advance(by: 60)
        let next = try send(harness, #"{"action":"delete","fence":"f0","confirm":true}"#)
        #expect(next["ok"] as? Bool == true, "a minute gives the budget back")
        #expect(try fileFences(harness).compactMap { $0["identifier"] as? String } == ["home", "office", "f1", "f2", "f3", "f4"])
    }

    /// A command's change republishes only the Home Assistant configs that differ: an edit
    /// of a radius none, a new fence its presence sensor's, and a removed one the empty
    /// config that deletes its entity.
    @Test func aChangeRepublishesOnlyTheHomeAssistantConfigsThatDiffer() throws {
        let harness = try BridgeHarness()
        let discovery = try TestClient(port: harness.broker.port)
        try discovery.subscribe("homeassistant/#")
        // The start's announcement may still be going out while the client subscribes. A
        // change announced after it comes after all of it: once the marker's config is
        // here, nothing of the start's announcement is still to come.
        _ = try send(harness, #"{"action":"add","fence":{"identifier":"marker","latitude":52.5,"longitude":13.41,"radius":50,"eventType":"onEntry"}}"#)
        #expect(discovery.waitForMessage(on: "homeassistant/binary_sensor/+/presence_marker/config") != nil, "the start's configs and the marker's came")
        discovery.clear()

        _ = try send(harness, #"{"action":"edit","fence":"home","changes":{"radius":120}}"#)
        let added = try send(harness, #"{"action":"add","fence":{"identifier":"gym","latitude":52.5,"longitude":13.41,"radius":50,"eventType":"onEntry"}}"#)
        #expect(added["ok"] as? Bool == true)
        _ = try send(harness, #"{"action":"delete","fence":"office","confirm":true}"#)
        // Announcements go out in order: once the last change's config is there, so is
        // everything the changes before it published.
        _ = try send(harness, #"{"action":"add","fence":{"identifier":"last","latitude":52.5,"longitude":13.41,"radius":50,"eventType":"onEntry"}}"#)
        #expect(discovery.waitForMessage(on: "homeassistant/binary_sensor/+/presence_last/config") != nil)
        let configs = discovery.messages.filter { $0.topic.hasPrefix("homeassistant/") }
        #expect(configs.map { $0.topic.split(separator: "/").suffix(2).joined(separator: "/") }
            == ["presence_gym/config", "presence_office/config", "presence_last/config"])
        #expect(configs.dropFirst().first?.payload == [], "the deleted fence's entity is removed")
    }

    @Test func addListPreviewCommitIsWrittenToTheFileAndSurvivesARestart() throws {
        let harness = try BridgeHarness()
        try harness.ownTracks("alice/phone", 52.5, 13.41, tst: 0)

        let added = try send(harness, #"{"action":"add","fence":{"identifier":"gym","latitude":52.5,"longitude":13.41,"radius":0,"note":"Leg day","eventType":"onEntry"}}"#)
        #expect(added["ok"] as? Bool == true)
        #expect((added["fence"] as? [String: Any])?["radius"] as? Int == 1)
        #expect((added["warnings"] as? [String])?.first?.contains("radius 0 m clamped to 1 m") == true)

        let list = try send(harness, #"{"action":"list"}"#)
        #expect((list["fences"] as? [[String: Any]])?.compactMap { $0["identifier"] as? String } == ["home", "office", "gym"])

        let preview = try send(harness, #"{"action":"preview","change":{"action":"edit","fence":"gym","changes":{"radius":500,"note":"Cardio"}}}"#)
        let peek = try #require(preview["preview"] as? [String: Any])
        #expect((peek["fence"] as? [String: Any])?["radius"] as? Int == 500)
        #expect((peek["previous"] as? [String: Any])?["radius"] as? Int == 1)
        #expect((peek["relation"] as? [String: Any])?["state"] as? String == "inside")
        #expect(peek["notification"] is NSNull, "the fence is new to the device: its next fix only establishes the relation")
        let token = try #require(preview["token"] as? String)
        #expect(try fileFences(harness).first { $0["identifier"] as? String == "gym" }?["radius"] as? Int == 1, "a preview changes nothing")

        let commit = try send(harness, #"{"action":"commit","token":"\#(token)"}"#)
        #expect(commit["ok"] as? Bool == true)
        #expect(commit["committed"] as? String == "edit")
        let gym = try fileFences(harness).first { $0["identifier"] as? String == "gym" }
        #expect(gym?["radius"] as? Int == 500)
        #expect(gym?["note"] as? String == "Cardio")

        harness.stopBridge()
        try harness.startBridge()
        let after = try send(harness, #"{"action":"get","fence":"gym"}"#)
        #expect((after["fence"] as? [String: Any])?["note"] as? String == "Cardio")
    }

    @Test func aPreviewShowsTheNotificationApplyingWouldCause() throws {
        let harness = try BridgeHarness()
        try harness.ownTracks("alice/phone", 52.52, 13.405, tst: 0)
        _ = try send(harness, #"{"action":"list"}"#)
        let preview = try send(harness, #"{"action":"preview","change":{"action":"edit","fence":"home","changes":{"latitude":52.6}}}"#)
        let peek = try #require(preview["preview"] as? [String: Any])
        let notification = try #require(peek["notification"] as? [String: Any])
        #expect(notification["event"] as? String == "exit")
        #expect(notification["fence"] as? String == "home")
        let relation = try #require(peek["relation"] as? [String: Any])
        #expect(relation["state"] as? String == "outside")
        #expect((relation["distanceToEdge"] as? Double ?? 0) > 8_000)
    }

    @Test func deleteAsksForConfirmationCancelKeepsCommitDeletes() throws {
        let harness = try BridgeHarness()
        let ask = try send(harness, #"{"action":"delete","fence":"office"}"#)
        #expect(ask["ok"] as? Bool == true)
        #expect((ask["confirm"] as? String)?.contains("commit") == true)
        #expect(((ask["preview"] as? [String: Any])?["fence"] as? [String: Any])?["identifier"] as? String == "office")
        let first = try #require(ask["token"] as? String)
        let cancel = try send(harness, #"{"action":"cancel","token":"\#(first)"}"#)
        #expect(cancel["cancelled"] as? Bool == true)
        #expect(try fileFences(harness).contains { $0["identifier"] as? String == "office" })
        #expect(error(try send(harness, #"{"action":"commit","token":"\#(first)"}"#)) == "unknown_token", "a cancelled token is gone")

        let again = try send(harness, #"{"action":"delete","fence":"office"}"#)
        let second = try #require(again["token"] as? String)
        let commit = try send(harness, #"{"action":"commit","token":"\#(second)"}"#)
        #expect(commit["committed"] as? String == "delete")
        #expect(!(try fileFences(harness).contains { $0["identifier"] as? String == "office" }))

        let script = try send(harness, #"{"action":"delete","fence":"home","confirm":true}"#)
        #expect((script["deleted"] as? [String: Any])?["identifier"] as? String == "home")
        #expect(try fileFences(harness).isEmpty)
    }

    @Test func aStaleTokenIsRefused() throws {
        let harness = try BridgeHarness()
        let preview = try send(harness, #"{"action":"preview","change":{"action":"edit","fence":"home","changes":{"radius":250}}}"#)
        let token = try #require(preview["token"] as? String)
        _ = try send(harness, #"{"action":"edit","fence":"office","changes":{"note":"changed meanwhile"}}"#)
        let commit = try send(harness, #"{"action":"commit","token":"\#(token)"}"#)
        #expect(commit["ok"] as? Bool == false)
        #expect(error(commit) == "stale")
        #expect(try fileFences(harness).first { $0["identifier"] as? String == "home" }?["radius"] as? Int == 100)
    }

    @Test func everyBadRequestHasItsOwnCodeAndLeavesTheFileAlone() throws {
        let harness = try BridgeHarness(fences: """
            {"devices": {"alice/phone": [{"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntry"}],
                         "bob/phone": []}}
            """)
        let before = try Data(contentsOf: harness.fencesURL)
        let fence = #""latitude":1,"longitude":2,"radius":5,"eventType":"onEntry""#
        let cases: [(String, String, String)] = [
            ("alice/phone", #"{"action":"explode"}"#, "unknown_action"),
            ("alice/phone", #"{"action":"get"}"#, "missing_field"),
            ("alice/phone", #"{"action":"get","fence":5}"#, "wrong_type"),
            ("alice/phone", #"{"action":"add","fence":{"identifier":"x","latitude":95,"longitude":2,"radius":5,"eventType":"onEntry"}}"#, "out_of_range"),
            ("alice/phone", #"{"action":"add","fence":{"identifier":"x","longitude":2,"radius":5,"eventType":"onEntry"}}"#, "missing_field"),
            ("alice/phone", #"{"action":"add","fence":{"identifier":"x",\#(fence),"radius2":1}}"#, "unknown_key"),
            ("alice/phone", #"{"action":"add","fence":{"identifier":"home",\#(fence)}}"#, "duplicate_identifier"),
            ("alice/phone", #"{"action":"edit","fence":"gone","changes":{"radius":5}}"#, "unknown_fence"),
            ("alice/phone", #"{"action":"commit","token":"nope"}"#, "unknown_token"),
            ("mallory/phone", #"{"action":"list"}"#, "not_allowed"),
        ]
        for (device, request, code) in cases {
            #expect(error(try send(harness, request, device: device)) == code, "\(request)")
        }
        #expect(try Data(contentsOf: harness.fencesURL) == before, "no refused request changed the file")

        for index in 0..<19 {
            _ = try send(harness, #"{"action":"add","fence":{"identifier":"f\#(index)",\#(fence)}}"#, device: "bob/phone")
        }
        #expect(error(try send(harness, #"{"action":"add","fence":{"identifier":"f20",\#(fence)}}"#, device: "bob/phone")) == nil)
        #expect(error(try send(harness, #"{"action":"add","fence":{"identifier":"f21",\#(fence)}}"#, device: "bob/phone")) == "fence_limit")
        #expect(try fileFences(harness, "bob/phone").count == 20)
    }

    @Test func handEditsArePickedUpAndInvalidOnesRefusedKeepingTheRunningFences() throws {
        // The file is looked at every second of the bridge's clock: the test moves it on.
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock)
        let edited = BridgeHarness.fences.replacingOccurrences(of: #""Welcome home""#, with: #""Home again""#)
        try edited.write(to: harness.fencesURL, atomically: true, encoding: .utf8)
        #expect(waitUntil(advancing: clock, by: 1) { harness.bridge?.fenceBook.fences(of: "alice/phone").first?.note == "Home again" })

        try harness.ownTracks("alice/phone", 52.50, 13.405, tst: 0)
        try #"{"devices": {"alice/phone": [{"identifier": "home", "latitude": 95}]}}"#.write(to: harness.fencesURL, atomically: true, encoding: .utf8)
        #expect(waitUntil(advancing: clock, by: 1) { harness.observer.messages.contains { $0.topic == "geotify/error" } })
        let report = harness.observer.messages.first { $0.topic == "geotify/error" }
        #expect(report?.text.contains(#""error":"fence_file""#) == true)
        #expect(report?.text.contains("latitude 95 is outside -90...90") == true)
        #expect(harness.bridge?.fenceBook.fences(of: "alice/phone").count == 2, "the last good fences stay in force")
        try harness.ownTracks("alice/phone", 52.52, 13.405, tst: 60)
        #expect(harness.events("alice/phone", count: 1).first?["note"] as? String == "Home again")
        #expect(harness.logLines.all.contains { $0.contains("is not valid; keeping the fences in force") })
    }

    @Test func commandsCanBeTurnedOff() throws {
        let harness = try BridgeHarness(start: false, configure: { $0.commandsEnabled = false })
        try harness.startBridge()
        #expect(error(try send(harness, #"{"action":"list"}"#)) == "not_allowed")
    }
}

/// Replies to MQTT v5 requests also go to their response topic, with their correlation data.
@Suite("Fence commands over MQTT v5", .serialized, .waiting)
struct FenceCommandV5Tests {
    @Test func aReplyGoesToTheResponseTopicWithTheCorrelationData() throws {
        let harness = try BridgeHarness(start: false, configure: { $0.security.protocolVersion = .v5 })
        try harness.startBridge()
        let requester = try TestClient(port: harness.broker.port, protocolVersion: .v5)
        try requester.subscribe("geotify/reply/alice/phone/app-7")
        try requester.publish(
            "geotify/cmd/alice/phone", bytes: Array(#"{"action":"get","fence":"home"}"#.utf8),
            correlationData: Array("request-42".utf8), responseTopic: "geotify/reply/alice/phone/app-7")
        let reply = requester.waitForMessage(on: "geotify/reply/alice/phone/app-7")
        #expect(reply?.correlationData == Array("request-42".utf8))
        #expect(reply?.text.contains(#""ok":true"#) == true)
        #expect(reply?.text.contains(#""identifier":"home""#) == true)
        #expect(harness.observer.waitForMessage(on: "geotify/reply/alice/phone")?.text == reply?.text, "and on the reply topic as always")
    }
}
