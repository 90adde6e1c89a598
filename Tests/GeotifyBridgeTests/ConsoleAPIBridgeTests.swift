import Foundation
@testable import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore
import GeotifyTestSupport
import Testing

/// The web console's API through the real `BridgeConsole`: what the fixture bridge
/// cannot show, because it has no lanes, no evaluation rules, no MQTT and no live fence
/// book. Each change is checked in the fence file, in what the bridge then evaluates, and
/// in what it publishes.
@Suite("Web console API of the real bridge", .serialized, .waiting)
struct ConsoleAPIBridgeTests {
    static let gym = #"{"identifier":"gym","latitude":52.53,"longitude":13.38,"radius":0,"note":"Leg day","eventType":"onEntryAndExit"}"#

    @Test func theFenceListAndGeoJSONAreTheBooksInForce() throws {
        let console = try ConsoleBridge()
        let fences = ConsoleBridge.json(try console.call("GET", "/api/fences", as: "viewer"))
        #expect(fences["devices"]?["alice/mqtt"]?.arrayValue?.map { $0["identifier"] } == ["home", "office"])
        #expect(fences["devices"]?["van/7"]?.arrayValue?.count == 1)
        let geojson = try console.call("GET", "/api/fences.geojson", as: "viewer")
        #expect(geojson.headers["content-type"] == "application/geo+json")
        #expect(ConsoleBridge.json(geojson)["features"]?.arrayValue?.count == 5)

        // A fence added over MQTT is in the list at once, as the bridge's book has it.
        try console.harness.observer.publish("geotify/cmd/van/7", #"{"id":"m","action":"add","fence":\#(Self.gym)}"#)
        #expect(console.harness.observer.waitForMessage(on: "geotify/reply/van/7", where: { $0.text.contains(#""ok":true"#) }) != nil)
        let after = ConsoleBridge.json(try console.call("GET", "/api/fences", as: "viewer"))
        #expect(after["devices"]?["van/7"]?.arrayValue?.map { $0["identifier"] } == ["depot", "gym"])

        // An edit of the file by hand is shown once the bridge has noticed it.
        let edited = console.fenceFile.replacingOccurrences(of: "Van 7 is back", with: "Depot reached")
        try edited.write(to: console.harness.fencesURL, atomically: true, encoding: .utf8)
        console.clock.advance(by: 1.1)
        #expect(waitUntil {
            let text = (try? console.call("GET", "/api/fences.geojson", as: "viewer").text) ?? ""
            return text.contains("Depot reached")
        })
    }

    /// A change past the device's writing time (`fenceWriteBudget`, here one write's least
    /// charge) is answered with 429 Too Many Requests and the reply an MQTT client would
    /// get; the file keeps the change before it only.
    @Test func aChangePastTheDevicesBudgetIsTooManyRequests() throws {
        let console = try ConsoleBridge { $0.fenceWriteBudget = FenceWriteBudget.leastCharge }
        #expect(try console.command(#"{"action":"add","fence":\#(Self.gym)}"#).0 == 200)
        let (status, reply) = try console.command(#"{"action":"edit","fence":"gym","changes":{"radius":50}}"#)
        #expect(status == 429)
        #expect(reply["error"]?["code"] == "rate_limited")
        #expect(console.storedFence("gym", of: "alice/mqtt")?["radius"] as? Double == 1, "the edit was not written")
    }

    @Test func aPeekOfAnAddShowsWhatWouldBeStoredAndPopStoresExactlyThat() throws {
        let console = try ConsoleBridge()
        try console.harness.observer.publish("owntracks/alice/mqtt", console.location(52.53, 13.38, tst: 1))
        #expect(waitUntil { console.read("/api/devices").arrayValue?.isEmpty == false })

        let (peekStatus, peek) = try console.command(#"{"id":"p","action":"preview","change":{"action":"add","fence":\#(Self.gym)}}"#)
        #expect(peekStatus == 200)
        #expect(peek["preview"]?["fence"]?["radius"] == 1, "clamped as it would be stored")
        #expect(peek["preview"]?["warnings"]?.arrayValue?.isEmpty == false)
        #expect(peek["preview"]?["relation"]?["state"] == "inside", "from the device's last fix")
        #expect(peek["preview"]?["notification"] == .null, "a new fence around the device notifies nothing (initialTrigger none)")
        #expect(console.storedFence("gym", of: "alice/mqtt") == nil, "a Peek changes nothing")

        let token = try #require(peek["token"]?.stringValue)
        let (popStatus, pop) = try console.command(#"{"id":"c","action":"commit","token":"\#(token)"}"#)
        #expect(popStatus == 200)
        #expect(pop["committed"] == "add")
        #expect(console.storedFence("gym", of: "alice/mqtt")?["radius"] as? Double == 1, "exactly the Peek")
        #expect(console.read("/api/fences")["devices"]?["alice/mqtt"]?.arrayValue?.map { $0["identifier"] } == ["home", "office", "gym"])
        // Home Assistant hears of the new fence.
        #expect(console.harness.observer.waitForMessage(on: "homeassistant/#", where: { $0.topic.hasSuffix("/presence_gym/config") && !$0.payload.isEmpty }) != nil)
        // A console command is answered over HTTP only, never on the reply topic.
        try console.settle()
        #expect(!console.harness.observer.messages.contains { $0.topic == "geotify/reply/alice/mqtt" && ($0.text.contains(#""id":"p""#) || $0.text.contains(#""id":"c""#)) })

        let (againStatus, again) = try console.command(#"{"action":"commit","token":"\#(token)"}"#)
        #expect(againStatus == 404)
        #expect(again["error"]?["code"] == "unknown_token")
    }

    @Test func aPeekForetellsTheNotificationOfTheNextFixAndPopMakesItSo() throws {
        let console = try ConsoleBridge()
        try console.harness.observer.publish("owntracks/alice/mqtt", console.location(52.53, 13.38, tst: 1))
        #expect(waitUntil { console.read("/api/devices").arrayValue?.isEmpty == false })
        let move = #"{"action":"edit","fence":"home","changes":{"latitude":52.53,"longitude":13.38}}"#
        let (_, peek) = try console.command(#"{"action":"preview","change":\#(move)}"#)
        #expect(peek["preview"]?["previous"]?["latitude"] == 52.52)
        #expect(peek["preview"]?["relation"]?["state"] == "inside")
        let foreseen = try #require(peek["preview"]?["notification"]?.objectValue)
        #expect(foreseen["event"] == "enter")
        #expect(console.storedFence("home", of: "alice/mqtt")?["latitude"] as? Double == 52.52, "a Peek changes nothing")
        let token = try #require(peek["token"]?.stringValue)
        #expect(try console.command(#"{"action":"commit","token":"\#(token)"}"#).0 == 200)
        #expect(console.storedFence("home", of: "alice/mqtt")?["latitude"] as? Double == 52.53)

        // The next fix there notifies as the Peek said (its own time and id aside).
        try console.harness.observer.publish("owntracks/alice/mqtt", console.location(52.53, 13.38, tst: 2))
        let message = try #require(console.harness.observer.waitForMessage(on: "geotify/event/alice/mqtt"))
        let event = try #require(try JSONParser().parse(message.payload).objectValue)
        for key in ["device", "fence", "event", "event_type", "note", "badge", "lat", "lon", "acc"] {
            #expect(event[key] == foreseen[key], "\(key)")
        }
        #expect(event["tst"] != foreseen["tst"], "the Peek reckons from the last fix, the event is of the new one")
    }

    @Test func aPreviewMadeStaleOverMQTTIsRefusedOverHTTP() throws {
        let console = try ConsoleBridge()
        let (_, peek) = try console.command(#"{"action":"preview","change":{"action":"edit","fence":"home","changes":{"radius":30}}}"#)
        let token = try #require(peek["token"]?.stringValue)
        try console.harness.observer.publish("geotify/cmd/alice/mqtt", #"{"id":"m","action":"edit","fence":"office","changes":{"note":"changed meanwhile"}}"#)
        #expect(console.harness.observer.waitForMessage(on: "geotify/reply/alice/mqtt", where: { $0.text.contains(#""ok":true"#) }) != nil)
        let (status, reply) = try console.command(#"{"action":"commit","token":"\#(token)"}"#)
        #expect(status == 409)
        #expect(reply["error"]?["code"] == "stale")
        #expect(reply["error"]?["message"]?.stringValue?.contains("preview again") == true)
        #expect(console.storedFence("home", of: "alice/mqtt")?["radius"] as? Double == 100, "nothing was changed")
        #expect(try console.counter("commands_refused.stale") == 1)
    }

    @Test func aPreviewExpiresOnTheBridgesClock() throws {
        let console = try ConsoleBridge { $0.previewTimeout = 60 }
        let (_, peek) = try console.command(#"{"action":"preview","change":{"action":"delete","fence":"home"}}"#)
        let token = try #require(peek["token"]?.stringValue)
        console.clock.advance(by: 61)
        let (status, reply) = try console.command(#"{"action":"commit","token":"\#(token)"}"#)
        #expect(status == 410)
        #expect(reply["error"]?["code"] == "expired_token")
        #expect(console.storedFence("home", of: "alice/mqtt") != nil)
    }

    @Test func deleteAsksForConfirmationCancelKeepsAndCommitRemovesWithItsRetainedTopics() throws {
        let console = try ConsoleBridge()
        try console.harness.observer.publish("owntracks/alice/mqtt", console.location(52.52, 13.405, tst: 1))
        #expect(console.harness.observer.waitForMessage(on: "geotify/presence/alice/mqtt/home") != nil)

        let (_, asked) = try console.command(#"{"action":"delete","fence":"home"}"#)
        let first = try #require(asked["token"]?.stringValue)
        #expect(asked["confirm"]?.stringValue != nil)
        let (cancelStatus, cancelled) = try console.command(#"{"action":"cancel","token":"\#(first)"}"#)
        #expect(cancelStatus == 200)
        #expect(cancelled["cancelled"] == true)
        #expect(console.storedFence("home", of: "alice/mqtt") != nil)
        #expect(try console.command(#"{"action":"commit","token":"\#(first)"}"#).0 == 404, "a cancelled token is gone")

        let (_, again) = try console.command(#"{"action":"delete","fence":"home"}"#)
        let second = try #require(again["token"]?.stringValue)
        let (status, deleted) = try console.command(#"{"action":"commit","token":"\#(second)"}"#)
        #expect(status == 200)
        #expect(deleted["committed"] == "delete")
        #expect(console.storedFence("home", of: "alice/mqtt") == nil)
        #expect(console.storedFence("office", of: "alice/mqtt") != nil)
        #expect(console.storedFence("home", of: "alice/http") != nil, "the twin keeps its own")
        // Its retained presence and Home Assistant entities are cleared.
        #expect(console.harness.observer.waitForMessage(on: "geotify/presence/alice/mqtt/home", where: { $0.payload.isEmpty }) != nil)
        #expect(console.harness.observer.waitForMessage(on: "homeassistant/#", where: { $0.topic.hasSuffix("/presence_home/config") && $0.payload.isEmpty }) != nil)
        let list = try console.command(#"{"action":"list"}"#).1["fences"]?.arrayValue?.map { $0["identifier"] }
        #expect(list == ["office"])
    }

    @Test func rolesAreEnforcedBeforeAnythingReachesTheBridge() throws {
        let console = try ConsoleBridge()
        let before = console.fenceFile
        #expect(try console.call("GET", "/api/state", as: nil).status == 401)
        #expect(try console.call("GET", "/healthz", as: nil).status == 200)
        #expect(try console.command(#"{"action":"list"}"#, as: "viewer").0 == 200)
        let (status, reply) = try console.command(#"{"id":"9","action":"preview","change":{"action":"delete","fence":"home"}}"#, as: "viewer")
        #expect(status == 403)
        #expect(reply["id"] == "9")
        #expect(reply["error"]?["code"] == "not_allowed")
        #expect(try console.command(#"{"action":"delete","fence":"home","confirm":true}"#, as: "viewer").0 == 403)
        #expect(try console.call("POST", "/api/fences.geojson", body: "{}", as: "viewer").status == 403)
        #expect(try console.call("GET", "/api/state", as: "alice").status == 403, "a tracker credential reads nothing")
        #expect(try console.call("GET", "/metrics", as: "viewer").status == 403)
        #expect(try console.call("POST", "/pub", body: console.location(1, 2, tst: 1), as: "viewer").status == 403)
        let other = try console.call("POST", "/pub", body: console.location(52.52, 13.405, tst: 1), as: "alice", headers: ["X-Limit-U": "van", "X-Limit-D": "7"])
        #expect(other.status == 403, "a tracker posts only for its own devices")
        #expect(try console.call("GET", "/metrics", as: "prometheus").status == 200)

        try console.settle("van/7")
        #expect(console.fenceFile == before)
        #expect(try console.counter("commands_executed") == 2, "only the viewer's list and settle's ran on a lane")
        #expect(try console.counter("fixes_evaluated") == 0, "no refused post was evaluated")
        #expect(try console.counter("http_refused.not_allowed") == 7)
        #expect(try console.counter("http_responses.401") == 1)
    }

    @Test func commandsForADeviceTheFenceFileDoesNotKnowAreRefusedAsOverMQTT() throws {
        let console = try ConsoleBridge()
        let (status, reply) = try console.command(#"{"action":"add","fence":\#(Self.gym)}"#, device: "stranger/phone")
        #expect(status == 403)
        #expect(reply["error"]?["code"] == "not_allowed")
        #expect(!console.fenceFile.contains("stranger"))
        let (badStatus, bad) = try console.command("not json")
        #expect(badStatus == 400)
        #expect(bad["error"]?["code"] == "invalid_json")
        #expect(console.harness.observer.waitForMessage(on: "geotify/error") != nil, "reported on geotify/error as the MQTT command is")
        let (longStatus, long) = try console.command(#"{"action":"list"}"#, device: "alice/" + String(repeating: "d", count: 300))
        #expect(longStatus == 400)
        #expect(long["error"]?["code"] == "invalid_topic")
        #expect(try console.counter("errors.invalid_topic") == 1, "counted as the command on that topic over MQTT is")
    }

    @Test func aResetBadgeFromThePageIsPublished() throws {
        let console = try ConsoleBridge()
        try console.harness.observer.publish("owntracks/alice/mqtt", console.location(52.50, 13.405, tst: 1))
        try console.harness.observer.publish("owntracks/alice/mqtt", console.location(52.52, 13.405, tst: 2))
        #expect(console.harness.observer.waitForMessage(on: "geotify/badge/alice/mqtt", where: { $0.text == "1" }) != nil)
        let (status, reply) = try console.command(#"{"action":"resetBadge"}"#)
        #expect(status == 200)
        #expect(reply["badge"] == 0)
        #expect(console.harness.observer.waitForMessage(on: "geotify/badge/alice/mqtt", where: { $0.text == "0" }) != nil)
        #expect(console.read("/api/devices").arrayValue?.first { $0["device"] == "alice/mqtt" }?["badge"] == 0)
    }

    @Test func aGeoJSONImportIsInForceAtOnceAndTheExportReimportsUnchanged() throws {
        let console = try ConsoleBridge()
        let drawn = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","properties":{"name":"kiosk","radius":50,"description":"Ice cream","eventType":"onEntry"},"geometry":{"type":"Point","coordinates":[11.60,48.15]}}]}
            """
        let imported = try console.call("POST", "/api/fences.geojson?device=van/7", body: drawn, contentType: "application/geo+json")
        #expect(imported.status == 200)
        #expect(console.storedFence("kiosk", of: "van/7") != nil)
        try console.harness.observer.publish("owntracks/van/7", console.location(48.0, 11.0, tst: 1))
        try console.harness.observer.publish("owntracks/van/7", console.location(48.15, 11.60, tst: 2))
        let event = try #require(console.harness.events("van/7", count: 1).first)
        #expect(event["fence"] as? String == "kiosk")
        #expect(event["note"] as? String == "Ice cream")

        let export = try console.call("GET", "/api/fences.geojson", as: "viewer")
        let file = console.fenceFile
        let again = try console.call("POST", "/api/fences.geojson?mode=replace", body: export.text, contentType: "application/geo+json")
        #expect(again.status == 200)
        #expect(ConsoleBridge.json(again)["imported"] == 6)
        #expect(try console.call("GET", "/api/fences.geojson", as: "viewer").body == export.body)
        #expect(console.fenceFile == file)
        let duplicate = try console.call("POST", "/api/fences.geojson", body: export.text)
        #expect(duplicate.status == 409)
        #expect(ConsoleBridge.json(duplicate)["error"]?["code"] == "duplicate_identifier")
    }

    /// A GeoJSON import naming a device another instance owns is refused whole with 421
    /// `other_shard`, naming the device and its owner, as its position and command are;
    /// one of shared fences with `read_only` (an instance reads only its own devices'
    /// files); one of this instance's devices is written.
    @Test func anImportNamingADeviceOfAnotherShardIsRefusedWith421OtherShard() throws {
        let owner = ShardAssignment.shard(of: "alice/elsewhere", among: 2)
        let shard = try ShardAssignment(index: 1 - owner, count: 2)
        let own = try #require((0..<100).lazy.map { "truck/\($0)" }.first { shard.owns($0) })
        let directory = try makeTemporaryDirectory("console-shard-import")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fences = directory.appendingPathComponent("fences").path
        let book = try #require(FenceFile(path: "fences.json").parse(Array(ConsoleBridge.fences.utf8)).book)
        _ = try FenceFile(path: fences + "/").write(book, expecting: [])
        let console = try ConsoleBridge { settings in
            settings.shard = shard
            settings.fencesPath = fences
        }
        let before = try #require(try FenceFile(path: fences).read())
        func feature(_ owner: String, _ name: String) -> String {
            #"{"type":"Feature","properties":{\#(owner),"name":"\#(name)","radius":50,"eventType":"onEntry"},"geometry":{"type":"Point","coordinates":[11.60,48.15]}}"#
        }
        func upload(_ features: String...) throws -> RawHTTPConnection.Response {
            try console.call("POST", "/api/fences.geojson", body: #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#, contentType: "application/geo+json")
        }
        let refused = try upload(feature(#""device":"\#(own)""#, "kiosk"), feature(#""device":"alice/elsewhere""#, "kiosk"))
        #expect(refused.status == 421)
        #expect(ConsoleBridge.json(refused)["error"]?["code"] == "other_shard")
        #expect(ConsoleBridge.json(refused)["error"]?["message"]?.stringValue?.hasPrefix("alice/elsewhere belongs to another instance of the bridge (instance \(owner) of 2") == true)
        let shared = try upload(feature(#""device":"\#(own)""#, "kiosk"), feature(#""shared":"shared""#, "plaza"))
        #expect(shared.status == 403, "refused whatever is sent: not this instance's fences to write")
        #expect(ConsoleBridge.json(shared)["error"]?["code"] == "read_only")
        #expect(try FenceFile(path: fences).read() == before, "nothing was imported")
        #expect(try upload(feature(#""device":"\#(own)""#, "kiosk")).status == 200)
        #expect(FenceFile(path: fences).load().book?.fences(of: own).map(\.identifier) == ["kiosk"])
    }

    @Test func healthFollowsTheBrokerConnection() throws {
        let console = try ConsoleBridge()
        let healthy = try console.call("GET", "/healthz", as: nil)
        #expect(healthy.status == 200)
        console.harness.broker.stop()
        #expect(waitUntil { (try? console.call("GET", "/healthz", as: nil).status) == 503 })
        let reason = ConsoleBridge.json(try console.call("GET", "/healthz", as: nil))["reason"]?.stringValue ?? ""
        #expect(reason.hasPrefix("broker: not connected"))
    }
}
