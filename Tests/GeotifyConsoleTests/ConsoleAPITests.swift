import Foundation
import GeotifyConsole
import GeotifyHTTP
import GeotifyJSON
import GeotifyStore
import Testing

/// Every endpoint and refusal of the console, through routing, logins and handlers,
/// against the fixture bridge.
@Suite struct ConsoleAPITests {
    // MARK: - Logins

    static let protected: [(String, String, String?)] = [
        ("GET", "/", nil), ("GET", "/console.js", nil), ("GET", "/console.css", nil), ("GET", "/leaflet/leaflet.js", nil),
        ("GET", "/api/state", nil), ("GET", "/api/devices", nil), ("GET", "/api/fences", nil),
        ("GET", "/api/notifications", nil), ("GET", "/api/events", nil), ("POST", "/api/cmd/alice/phone", "{\"action\":\"list\"}"),
        ("GET", "/api/fences.geojson", nil), ("POST", "/api/fences.geojson", "{}"), ("POST", "/pub", "{}"), ("GET", "/metrics", nil),
    ]

    @Test func withLoginsEveryEndpointButHealthNeedsOne() throws {
        let harness = try ConsoleHarness(logins: true)
        for (method, path, body) in Self.protected {
            let response = harness.call(method, path, body: body)
            #expect(response.status == 401, "\(method) \(path)")
            #expect(response.headers["WWW-Authenticate"]?.hasPrefix("Basic realm=") == true)
        }
        #expect(harness.call("GET", "/healthz").status == 200)
        #expect(harness.call("GET", "/api/state", as: "alice").status == 200)
    }

    @Test func eachRoleReachesWhatItMayAndIsRefusedTheRest() throws {
        let harness = try ConsoleHarness(logins: true)
        #expect(harness.call("GET", "/api/state", as: "bob").status == 200)
        #expect(harness.call("GET", "/metrics", as: "bob").status == 403)
        #expect(harness.call("POST", "/pub", body: "{}", as: "bob").status == 403)
        #expect(harness.call("POST", "/api/fences.geojson", body: "{}", as: "bob").status == 403)
        #expect(harness.call("GET", "/metrics", as: "prometheus").status == 200)
        #expect(harness.call("GET", "/api/state", as: "prometheus").status == 403)
        #expect(harness.call("GET", "/api/state", as: "alice-phone").status == 403)
    }

    @Test func withoutLoginsEverythingIsOpenAndTheSessionSaysSo() throws {
        let harness = try ConsoleHarness()
        let state = harness.json(harness.call("GET", "/api/state"))
        #expect(state["session"]?["user"] == .null)
        #expect(state["session"]?["logins"] == false)
        #expect(state["session"]?["roles"] == ["read", "manage", "tracker", "metrics"])
        #expect(harness.call("GET", "/metrics").status == 200)
    }

    @Test func aChangeFromAnotherSiteIsRefused() throws {
        let harness = try ConsoleHarness(logins: true)
        let response = harness.call("POST", "/api/cmd/alice/phone", body: "{\"action\":\"list\"}", as: "alice", headers: ["Sec-Fetch-Site": "cross-site"])
        #expect(response.status == 403)
        #expect(response.refusalCode == .http(.crossSite))
    }

    // MARK: - Page and reads

    @Test func thePageAndItsFilesAreServed() throws {
        let harness = try ConsoleHarness()
        let page = harness.call("GET", "/")
        #expect(page.status == 200)
        #expect(page.headers["Content-Type"] == "text/html; charset=utf-8")
        #expect(String(decoding: page.bytes, as: UTF8.self).contains("<script src=\"console.js\" defer>"))
        #expect(harness.call("GET", "/console.js").headers["Content-Type"] == "text/javascript; charset=utf-8")
        #expect(harness.call("GET", "/console.css").headers["Content-Type"] == "text/css; charset=utf-8")
        #expect(harness.call("GET", "/nothing").status == 404)
        #expect(harness.call("DELETE", "/api/state").status == 405)
    }

    @Test func leafletComesFromItsDirectoryWithoutTraversal() throws {
        let leaflet = try ConsoleHarness(settings: ["leaflet": "/usr/share/javascript/leaflet"])
        #expect(leaflet.call("GET", "/leaflet/leaflet.js").status == 200)
        #expect(leaflet.call("GET", "/leaflet/images/marker-icon.png").headers["Content-Type"] == "image/png")
        #expect(leaflet.call("GET", "/leaflet/../../../etc/passwd").status == 404)
        #expect(leaflet.call("GET", "/leaflet/images").status == 404)
    }

    @Test func theStateHoldsMapSettingsDevicesFencesAndNotifications() throws {
        let harness = try ConsoleHarness(settings: ["tiles": "", "tileAttribution": "none"])
        harness.move(52.0, 13.0)
        harness.move(52.52, 13.405, time: 1_700_000_200)
        let state = harness.json(harness.call("GET", "/api/state"))
        #expect(state["map"]?["tiles"] == "")
        #expect(state["devices"]?.arrayValue?.count == 1)
        #expect(state["fences"]?["devices"]?["alice/phone"]?.arrayValue?.count == 2)
        #expect(state["fences"]?["shared"]?["family"]?.arrayValue?.first?["identifier"] == "dateline")
        #expect(state["fences"]?["groups"]?["family"] == ["alice/phone", "bob/phone"])
        #expect(state["notifications"]?.arrayValue?.first?["fence"] == "home")
    }

    @Test func devicesShowTheirFixBadgeAndFences() throws {
        let harness = try ConsoleHarness()
        harness.move(52.0, 13.0)
        harness.move(52.52, 13.405, time: 1_700_000_200)
        let devices = harness.json(harness.call("GET", "/api/devices"))
        #expect(devices == [["device": "alice/phone", "lat": 52.52, "lon": 13.405, "acc": 5, "tst": 1_700_000_200, "badge": 1, "inside": ["home"]]])
    }

    @Test func notificationsComeNewestFirstUpToTheLimit() throws {
        let harness = try ConsoleHarness()
        harness.move(52.0, 13.0, time: 1)
        harness.move(52.52, 13.405, time: 2)
        harness.move(52.0, 13.0, time: 3)
        let all = harness.json(harness.call("GET", "/api/notifications")).arrayValue ?? []
        #expect(all.map { $0["event"] } == ["exit", "enter"])
        #expect(harness.json(harness.call("GET", "/api/notifications?limit=1")).arrayValue?.count == 1)
    }

    /// The console keeps the newest `capacity` notifications and no more, however many
    /// come: the oldest go first.
    @Test func theRecentNotificationsKeepTheirCapacityExactly() {
        let recent = RecentNotifications(capacity: 3)
        for number in 1...4 { recent.add(.number(Double(number))) }
        #expect(recent.newest(10) == [4, 3, 2], "one past the capacity: the oldest gone")
        recent.add(5)
        #expect(recent.newest(10) == [5, 4, 3])
        #expect(recent.newest(2) == [5, 4] && recent.newest(-1) == [])
    }

    @Test func theLiveStreamOpensWithTheWholeState() throws {
        let harness = try ConsoleHarness()
        let response = harness.call("GET", "/api/events")
        #expect(response.status == 200)
        #expect(response.headers["Content-Type"] == "text/event-stream")
        guard case .events(let subscription) = response.body else {
            Issue.record("not a stream")
            return
        }
        guard case .bytes(let bytes) = subscription.take(maximum: 1 << 20, park: {}, wake: {}) else {
            Issue.record("nothing queued")
            return
        }
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("retry: 2000\n\nevent: state\ndata: {\"session\""))
        harness.move(52.52, 13.405)
        harness.console.flush()
        guard case .bytes(let update) = subscription.take(maximum: 1 << 20, park: {}, wake: {}) else {
            Issue.record("no update")
            return
        }
        #expect(String(decoding: update, as: UTF8.self).contains("event: device\ndata: {\"device\":\"alice/phone\""))
        subscription.close()
    }

    /// A device the bridge forgets goes to the pages as `forgotten`, gathered with the
    /// positions: the device's last change in a quarter second is what is sent, so a
    /// position gathered before the forgetting does not follow it (which would show the
    /// device again), and one after it does.
    @Test func aForgottenDeviceIsSentInOrderWithItsPositions() throws {
        let harness = try ConsoleHarness()
        guard case .events(let subscription) = harness.call("GET", "/api/events").body else {
            Issue.record("not a stream")
            return
        }
        func sent() -> String {
            harness.console.flush()
            guard case .bytes(let bytes) = subscription.take(maximum: 1 << 20, park: {}, wake: {}) else { return "" }
            return String(decoding: bytes, as: UTF8.self)
        }
        #expect(sent().contains("event: state\n"))
        harness.move(52.52, 13.405)
        #expect(sent().contains("event: device\ndata: {\"device\":\"alice/phone\""))
        harness.move(52.0, 13.0, time: 1_700_000_200)
        try Data(#"{"devices": {"bob/phone": []}}"#.utf8).write(to: URL(fileURLWithPath: harness.fencesPath))
        harness.bridge.reloadFences()
        let forgotten = sent()
        #expect(forgotten.contains("event: forgotten\ndata: {\"device\":\"alice/phone\"}\n\n"))
        #expect(!forgotten.contains("event: device"), "the position before the forgetting is not sent after it")
        #expect(harness.json(harness.call("GET", "/api/devices")) == [])
        harness.move(52.52, 13.405, time: 1_700_000_300)
        let again = sent()
        #expect(again.contains("event: device\ndata: {\"device\":\"alice/phone\""))
        #expect(!again.contains("event: forgotten"))
        subscription.close()
    }

    /// A fence book whose state is larger than the stream's 1 MiB bound still opens the
    /// stream with it whole (the opening is not counted against the bound).
    @Test func theLiveStreamOpensWithAStateLargerThanItsBound() throws {
        let harness = try ConsoleHarness()
        let note = String(repeating: "n", count: 200)
        let devices = (0..<2000).map { device in
            let fences = (0..<3).map { fence in
                "{\"identifier\":\"f\(fence)\",\"latitude\":52.5,\"longitude\":13.4,\"radius\":100,\"eventType\":\"onEntry\",\"note\":\"\(note)\"}"
            }
            return "\"user\(device)/phone\":[\(fences.joined(separator: ","))]"
        }
        try Data("{\"devices\":{\(devices.joined(separator: ","))}}".utf8).write(to: URL(fileURLWithPath: harness.fencesPath))
        let response = harness.call("GET", "/api/events")
        guard case .events(let subscription) = response.body else {
            Issue.record("not a stream")
            return
        }
        #expect(!subscription.isClosed)
        #expect(subscription.pendingCount > EventStream.defaultMaximumPending, "the state is larger than the bound")
        var received: [UInt8] = []
        while case .bytes(let bytes) = subscription.take(maximum: 1 << 16, park: {}, wake: {}) {
            received += bytes
        }
        let text = String(decoding: received, as: UTF8.self)
        #expect(text.contains("event: state\ndata: {"))
        #expect(text.contains("user1999/phone"))
        subscription.close()
    }

    // MARK: - Commands

    func command(_ harness: ConsoleHarness, _ body: String, device: String = "alice/phone", as user: String? = nil) -> (Int, JSON) {
        let response = harness.call("POST", "/api/cmd/\(device)", body: body, as: user)
        return (response.status, harness.json(response))
    }

    @Test func aCommandIsTheMQTTCommandAndItsReplyTheMQTTReply() throws {
        let harness = try ConsoleHarness()
        let (status, reply) = command(harness, "{\"id\":\"7\",\"action\":\"list\"}")
        #expect(status == 200)
        #expect(reply["id"] == "7")
        #expect(reply["action"] == "list")
        #expect(reply["ok"] == true)
        #expect(reply["fences"]?.arrayValue?.map { $0["identifier"] } == ["home", "park"])
    }

    @Test func addThroughPeekAndPopStoresExactlyThePreview() throws {
        let harness = try ConsoleHarness()
        let fence = "{\"identifier\":\"gym\",\"latitude\":52.53,\"longitude\":13.38,\"radius\":0,\"note\":\"Leg day\",\"eventType\":\"onEntry\"}"
        let (peekStatus, peek) = command(harness, "{\"action\":\"preview\",\"change\":{\"action\":\"add\",\"fence\":\(fence)}}")
        #expect(peekStatus == 200)
        #expect(peek["preview"]?["fence"]?["radius"] == 1, "clamped")
        #expect(peek["preview"]?["warnings"]?.arrayValue?.isEmpty == false)
        #expect(!harness.fenceFile.contains("gym"), "a preview changes nothing")
        let token = try #require(peek["token"]?.stringValue)
        let (popStatus, pop) = command(harness, "{\"action\":\"commit\",\"token\":\"\(token)\"}")
        #expect(popStatus == 200)
        #expect(pop["committed"] == "add")
        #expect(harness.fenceFile.contains("\"gym\""))
        let (againStatus, again) = command(harness, "{\"action\":\"commit\",\"token\":\"\(token)\"}")
        #expect(againStatus == 404)
        #expect(again["error"]?["code"] == "unknown_token")
    }

    @Test func aStalePreviewIsRefusedWithTheReason() throws {
        let harness = try ConsoleHarness()
        let (_, peek) = command(harness, "{\"action\":\"preview\",\"change\":{\"action\":\"edit\",\"fence\":\"home\",\"changes\":{\"radius\":30}}}")
        let token = try #require(peek["token"]?.stringValue)
        #expect(command(harness, "{\"action\":\"edit\",\"fence\":\"park\",\"changes\":{\"note\":\"changed meanwhile\"}}").0 == 200)
        let (status, reply) = command(harness, "{\"action\":\"commit\",\"token\":\"\(token)\"}")
        #expect(status == 409)
        #expect(reply["error"]?["code"] == "stale")
        #expect(reply["error"]?["message"]?.stringValue?.contains("preview again") == true)
    }

    @Test func anExpiredPreviewIsGone() throws {
        let harness = try ConsoleHarness()
        let (_, peek) = command(harness, "{\"action\":\"preview\",\"change\":{\"action\":\"delete\",\"fence\":\"home\"}}")
        let token = try #require(peek["token"]?.stringValue)
        harness.scheduler.advance(by: 301)
        let (status, reply) = command(harness, "{\"action\":\"commit\",\"token\":\"\(token)\"}")
        #expect(status == 410)
        #expect(reply["error"]?["code"] == "expired_token")
    }

    @Test func deleteAsksForConfirmationAndCancelKeepsTheFence() throws {
        let harness = try ConsoleHarness()
        let (_, asked) = command(harness, "{\"action\":\"delete\",\"fence\":\"home\"}")
        let first = try #require(asked["token"]?.stringValue)
        #expect(asked["confirm"]?.stringValue != nil)
        #expect(command(harness, "{\"action\":\"cancel\",\"token\":\"\(first)\"}").1["cancelled"] == true)
        #expect(harness.fenceFile.contains("\"home\""))
        let (_, again) = command(harness, "{\"action\":\"delete\",\"fence\":\"home\"}")
        let second = try #require(again["token"]?.stringValue)
        #expect(command(harness, "{\"action\":\"commit\",\"token\":\"\(second)\"}").0 == 200)
        #expect(!harness.fenceFile.contains("\"home\""))
    }

    @Test func refusalsCarryTheBridgesCodesAsStatuses() throws {
        let harness = try ConsoleHarness()
        #expect(command(harness, "{\"action\":\"get\",\"fence\":\"nope\"}").0 == 404)
        #expect(command(harness, "{\"action\":\"fly\"}").1["error"]?["code"] == "unknown_action")
        #expect(command(harness, "{\"action\":\"fly\"}").0 == 400)
        #expect(command(harness, "not json").1["error"]?["code"] == "invalid_json")
        #expect(command(harness, "{\"action\":\"add\",\"fence\":{\"identifier\":\"home\",\"latitude\":1,\"longitude\":1,\"radius\":5,\"eventType\":\"onEntry\"}}").0 == 409)
        #expect(command(harness, "{\"action\":\"add\",\"fence\":{\"identifier\":\"x\",\"latitude\":95,\"longitude\":1,\"radius\":5,\"eventType\":\"onEntry\"}}").1["error"]?["code"] == "out_of_range")
        let wrongType = harness.call("POST", "/api/cmd/alice/phone", body: "{\"action\":\"list\"}", contentType: "text/plain")
        #expect(wrongType.status == 415)
        #expect(wrongType.refusalCode == .http(.unsupportedMediaType))
        let untyped = harness.call("POST", "/api/cmd/alice/phone", body: "{\"action\":\"list\"}", contentType: nil)
        #expect(untyped.status == 415, "a body without a Content-Type is what a cross-site fetch may send without asking")
    }

    @Test func theFenceLimitIsTheBridgesRefusal() throws {
        let harness = try ConsoleHarness()
        for index in 0..<18 {
            #expect(command(harness, "{\"action\":\"add\",\"fence\":{\"identifier\":\"f\(index)\",\"latitude\":1,\"longitude\":1,\"radius\":5,\"eventType\":\"onEntry\"}}").0 == 200)
        }
        let (status, reply) = command(harness, "{\"action\":\"add\",\"fence\":{\"identifier\":\"f21\",\"latitude\":1,\"longitude\":1,\"radius\":5,\"eventType\":\"onEntry\"}}")
        #expect(status == 409)
        #expect(reply["error"]?["code"] == "fence_limit")
    }

    @Test func readersMayListAndGetButNotChange() throws {
        let harness = try ConsoleHarness(logins: true)
        #expect(command(harness, "{\"action\":\"list\"}", as: "bob").0 == 200)
        #expect(command(harness, "{\"action\":\"get\",\"fence\":\"home\"}", as: "bob").0 == 200)
        let (status, reply) = command(harness, "{\"id\":\"9\",\"action\":\"preview\",\"change\":{\"action\":\"delete\",\"fence\":\"home\"}}", as: "bob")
        #expect(status == 403)
        #expect(reply["id"] == "9")
        #expect(reply["ok"] == false)
        #expect(reply["error"]?["code"] == "not_allowed")
        #expect(command(harness, "{\"action\":\"resetBadge\"}", as: "alice").0 == 200)
    }

    // MARK: - GeoJSON

    @Test func theGeoJSONExportImportsBackUnchanged() throws {
        let harness = try ConsoleHarness()
        let export = harness.call("GET", "/api/fences.geojson")
        #expect(export.headers["Content-Type"] == "application/geo+json")
        let before = harness.fenceFile
        let imported = harness.call("POST", "/api/fences.geojson?mode=replace", body: String(decoding: export.bytes, as: UTF8.self), contentType: "application/geo+json")
        #expect(imported.status == 200)
        #expect(harness.json(imported)["imported"] == 4)
        #expect(harness.call("GET", "/api/fences.geojson").bytes == export.bytes)
        let canonical = FenceFile(path: harness.fencesPath).parse(Array(before.utf8)).book.map(FenceFile.contents)
        #expect(Array(harness.fenceFile.utf8) == canonical)
    }

    @Test func importingWhatIsThereAlreadyIsADuplicate() throws {
        let harness = try ConsoleHarness()
        let export = String(decoding: harness.call("GET", "/api/fences.geojson").bytes, as: UTF8.self)
        let response = harness.call("POST", "/api/fences.geojson", body: export)
        #expect(response.status == 409)
        #expect(response.refusalCode == .domain(.duplicateIdentifier))
    }

    @Test func aFeatureDrawnElsewhereImportsForTheDeviceAsked() throws {
        let harness = try ConsoleHarness()
        let drawn = """
            {"type":"FeatureCollection","features":[
              {"type":"Feature","properties":{"name":"lake","stroke":"#555"},"geometry":{"type":"Polygon","coordinates":[[[13.1,52.4],[13.2,52.4],[13.2,52.5],[13.1,52.4]]]}},
              {"type":"Feature","properties":{"name":"kiosk","radius":25,"description":"Ice cream"},"geometry":{"type":"Point","coordinates":[13.3,52.45]}}]}
            """
        let response = harness.call("POST", "/api/fences.geojson?device=bob/phone", body: drawn)
        #expect(response.status == 200)
        let list = harness.json(harness.call("POST", "/api/cmd/bob/phone", body: "{\"action\":\"list\"}"))["fences"]?.arrayValue ?? []
        #expect(list.map { $0["identifier"] } == ["lake", "kiosk"])
        #expect(list.last?["note"] == "Ice cream")
        #expect(list.last?["radius"] == 25)
    }

    @Test func badGeoJSONIsRefusedWithTheReason() throws {
        let harness = try ConsoleHarness()
        #expect(harness.call("POST", "/api/fences.geojson", body: "nope").refusalCode == .domain(.invalidJSON))
        #expect(harness.call("POST", "/api/fences.geojson", body: "{\"type\":\"Point\"}").refusalCode == .domain(.invalidImport))
        let ownerless = "{\"type\":\"Feature\",\"properties\":{\"name\":\"x\"},\"geometry\":{\"type\":\"Point\",\"coordinates\":[1,2]}}"
        let refused = harness.call("POST", "/api/fences.geojson", body: ownerless)
        #expect(refused.status == 400)
        #expect(harness.json(refused)["error"]?["message"]?.stringValue?.contains("feature 1") == true)
        #expect(harness.call("POST", "/api/fences.geojson?mode=merge", body: ownerless).refusalCode == .domain(.invalidValue))
    }

    // MARK: - OwnTracks HTTP mode

    @Test func aPositionIsAnsweredAsTheRecorderAnswers() throws {
        let harness = try ConsoleHarness()
        harness.move(52.0, 13.0)
        let response = harness.move(52.52, 13.405, time: 1_700_000_200)
        #expect(response.status == 200)
        #expect(response.bytes == Array("[]".utf8))
        #expect(response.headers["Content-Type"] == "application/json")
        #expect(harness.json(harness.call("GET", "/api/notifications")).arrayValue?.first?["id"] == "alice/phone/home/enter/1700000200")
    }

    @Test func theSenderComesFromTheHeadersTheQueryOrTheDefaults() throws {
        let harness = try ConsoleHarness()
        let body = "{\"_type\":\"location\",\"lat\":1,\"lon\":2}"
        #expect(harness.call("POST", "/pub?u=carol&d=watch", body: body).status == 200)
        #expect(harness.call("POST", "/pub", body: body).status == 200)
        let devices = harness.json(harness.call("GET", "/api/devices")).arrayValue?.compactMap { $0["device"]?.stringValue }
        #expect(devices == ["carol/watch", "owntracks/phone"])
        #expect(harness.call("POST", "/pub", body: body, headers: ["X-Limit-U": "a/b"]).refusalCode == .domain(.invalidTopic))
    }

    /// A position must be declared JSON (as the OwnTracks apps declare it, charset or not):
    /// a form or `text/plain` post, which a page on another site may send without asking,
    /// is refused and nothing is published.
    @Test func aPositionNotDeclaredJSONIs415() throws {
        let harness = try ConsoleHarness()
        let body = "{\"_type\":\"location\",\"lat\":1,\"lon\":2}"
        for type in ["text/plain", "application/x-www-form-urlencoded", nil] as [String?] {
            let refused = harness.call("POST", "/pub", body: body, contentType: type)
            #expect(refused.status == 415, "\(type ?? "no Content-Type")")
            #expect(refused.refusalCode == .http(.unsupportedMediaType))
        }
        #expect(harness.json(harness.call("GET", "/api/devices")).arrayValue == [])
        #expect(harness.call("POST", "/pub", body: body, contentType: "application/json; charset=utf-8").status == 200)
        #expect(harness.call("POST", "/pub", body: body, contentType: "Application/JSON").status == 200)
    }

    /// A large answer is held until its client reads it; one that asks for the state again
    /// and again without reading would hold a copy per request. At most
    /// `maximumUnsentAnswers` per user are held: the next is refused, other users are not,
    /// and a slot comes back when its answer is let go.
    @Test func unreadLargeAnswersAreBoundedPerUser() throws {
        let harness = try ConsoleHarness(logins: true)
        var held = (0..<Console.maximumUnsentAnswers).map { index in
            harness.call("GET", ["/api/state", "/api/fences", "/api/devices", "/api/fences.geojson"][index % 4], as: "bob")
        }
        #expect(held.allSatisfy { $0.status == 200 })
        let refused = harness.call("GET", "/api/state", as: "bob")
        #expect(refused.status == 429)
        #expect(refused.refusalCode == .http(.tooManyUnread))
        #expect(refused.headers["Retry-After"] == "5")
        #expect(harness.call("GET", "/api/state", as: "alice").status == 200, "another user is not held up")
        held.removeLast()
        #expect(harness.call("GET", "/api/state", as: "bob").status == 200)
        held.removeAll()
        #expect(harness.console.unsent.unsent("bob") == 0)
    }

    /// After a change every open page fetches the fence list at once, and one user
    /// (without logins, every page is one) may have at most `maximumUnsentAnswers` answers
    /// unsent: a fifth page was refused and fetched again 5 s later. The list is rendered
    /// once for the requests that come while it is held, sent from that one body, and
    /// counts once; other answers still count, and a changed book's list is another one.
    @Test func pagesFetchingTheFenceListAtOnceShareOneRenderingAndOneSlot() throws {
        let harness = try ConsoleHarness(logins: true)
        func body(_ response: HTTPResponse) -> HeldBody? {
            if case .held(let body) = response.body { body } else { nil }
        }
        var lists = (0..<10).map { _ in harness.call("GET", "/api/fences", as: "bob") }
        #expect(lists.allSatisfy { $0.status == 200 && $0.headers["Content-Type"] == "application/json" })
        let first = try #require(body(lists[0]))
        #expect(lists.allSatisfy { body($0) === first }, "rendered once")
        #expect(harness.json(lists[9])["devices"]?["alice/phone"]?.arrayValue?.map { $0["identifier"] } == ["home", "park"])
        #expect(harness.console.unsent.unsent("bob") == 1, "one slot for ten requests of one body")
        var states = (1..<Console.maximumUnsentAnswers).map { _ in harness.call("GET", "/api/state", as: "bob") }
        #expect(states.allSatisfy { $0.status == 200 })
        #expect(harness.call("GET", "/api/state", as: "bob").status == 429, "the other answers still count")
        lists.append(harness.call("GET", "/api/fences", as: "bob"))
        #expect(lists.last?.status == 200 && body(lists.last!) === first, "a share of the list held takes no slot")

        let fence = "{\"identifier\":\"gym\",\"latitude\":52.53,\"longitude\":13.38,\"radius\":50,\"eventType\":\"onEntry\"}"
        #expect(command(harness, "{\"action\":\"add\",\"fence\":\(fence)}", as: "alice").0 == 200)
        let refused = harness.call("GET", "/api/fences", as: "bob")
        #expect(refused.status == 429 && refused.refusalCode == .http(.tooManyUnread), "the changed book's list needs a slot")
        states.removeLast()
        let changed = harness.call("GET", "/api/fences", as: "bob")
        #expect(changed.status == 200 && body(changed) !== first)
        #expect(harness.json(changed)["devices"]?["alice/phone"]?.arrayValue?.map { $0["identifier"] } == ["home", "park", "gym"])
        #expect(harness.console.unsent.unsent("bob") == Console.maximumUnsentAnswers)
        lists.removeAll()
        #expect(harness.console.unsent.unsent("bob") == Console.maximumUnsentAnswers - 1, "the shared slot comes back with its last share")
        states.removeAll()
        _ = consume changed
        #expect(harness.console.unsent.unsent("bob") == 0)
    }

    /// A live stream opens with a copy of the whole state; a client that opens streams and
    /// never reads them would hold one per stream (up to 256). Until its opening has been
    /// taken whole, a stream counts as one of the user's unsent large answers: past
    /// `maximumUnsentAnswers` the next stream (or state) is refused, before anything is
    /// rendered, and a slot comes back when an opening has been read or its stream closed.
    @Test func unreadStreamOpeningsCountAmongTheUnsentAnswers() throws {
        let harness = try ConsoleHarness(logins: true)
        let streams = (0..<Console.maximumUnsentAnswers).map { _ in harness.call("GET", "/api/events", as: "bob") }
        #expect(streams.allSatisfy { $0.status == 200 })
        #expect(harness.console.unsent.unsent("bob") == Console.maximumUnsentAnswers)
        let refused = harness.call("GET", "/api/events", as: "bob")
        #expect(refused.status == 429)
        #expect(refused.refusalCode == .http(.tooManyUnread))
        #expect(refused.headers["Retry-After"] == "5")
        #expect(harness.call("GET", "/api/state", as: "bob").status == 429, "streams and answers share the bound")
        #expect(harness.call("GET", "/api/events", as: "alice").status == 200, "another user is not held up")
        guard case .events(let read) = streams[0].body, case .events(let closed) = streams[1].body else {
            Issue.record("not streams")
            return
        }
        var opening = ""
        while case .bytes(let bytes) = read.take(maximum: 4096, park: {}, wake: {}) {
            opening += String(decoding: bytes, as: UTF8.self)
        }
        #expect(opening.contains("event: state\n"))
        #expect(!read.isClosed, "the stream goes on once its opening is read")
        #expect(harness.console.unsent.unsent("bob") == Console.maximumUnsentAnswers - 1, "an opening read whole gives its slot back")
        closed.close()
        #expect(harness.console.unsent.unsent("bob") == Console.maximumUnsentAnswers - 2, "so does a stream closed unread")
        #expect(harness.call("GET", "/api/events", as: "bob").status == 200)
    }

    /// A page that reads neither its opening nor what follows is closed once 1 MiB of
    /// updates waits for it: what it had pending is dropped at once (not kept until the
    /// connection times out), its slot comes back, and it is counted.
    @Test func aStreamThatFallsTooFarBehindIsDroppedAndCounted() throws {
        // A bound of 16 KiB: about 130 moves reach it, where the console's 1 MiB took
        // about 8 500 (1.5 s of the suite's CPU).
        let harness = try ConsoleHarness(streamBound: 16 << 10)
        let response = harness.call("GET", "/api/events")
        guard case .events(let subscription) = response.body else {
            Issue.record("not a stream")
            return
        }
        #expect(harness.console.unsent.unsent("") == 1)
        var moves = 0
        while !subscription.isClosed && moves < 100_000 {
            harness.move(52.5 + Double(moves % 2) * 0.001, 13.405, time: 1_700_000_100 + moves)
            harness.console.flush()
            moves += 1
        }
        #expect(subscription.isClosed)
        #expect(subscription.pendingCount == 0, "nothing is kept for it")
        #expect(harness.console.unsent.unsent("") == 0)
        #expect(harness.bridge.counter("http_refused.too_far_behind") == 1)
        #expect(subscription.take(maximum: 4096, park: {}, wake: {}) == .end)
    }

    @Test func aTrackerPostsOnlyForItself() throws {
        let harness = try ConsoleHarness(logins: true)
        let body = "{\"_type\":\"location\",\"lat\":1,\"lon\":2}"
        #expect(harness.call("POST", "/pub", body: body, as: "alice-phone", headers: ["X-Limit-D": "phone"]).status == 200)
        #expect(harness.json(harness.call("GET", "/api/devices", as: "alice")).arrayValue?.first?["device"] == "alice-phone/phone")
        let other = harness.call("POST", "/pub", body: body, as: "alice-phone", headers: ["X-Limit-U": "bob"])
        #expect(other.status == 403)
        #expect(other.refusalCode == .domain(.notAllowed))
    }

    @Test func badPositionsAreRefusedAndOtherMessagesIgnored() throws {
        let harness = try ConsoleHarness()
        let bad = harness.call("POST", "/pub", body: "{not json")
        #expect(bad.status == 400)
        #expect(bad.refusalCode == .domain(.invalidJSON))
        #expect(harness.call("POST", "/pub", body: "{\"_type\":\"location\",\"lat\":95,\"lon\":0}").refusalCode == .domain(.outOfRange))
        let card = harness.call("POST", "/pub", body: "{\"_type\":\"card\",\"name\":\"Alice\"}")
        #expect(card.status == 200)
        #expect(card.bytes == Array("[]".utf8))
    }

    // MARK: - Health and metrics

    @Test func healthIs200WhenAllIsWellAnd503WithTheReasonWhenNot() throws {
        let harness = try ConsoleHarness(logins: true)
        #expect(harness.json(harness.call("GET", "/healthz"))["status"] == "ok")
        harness.bridge.setHealth(ConsoleHealth(checks: [
            .init(name: "broker", ok: false, detail: "not connected to mqtt://127.0.0.1:1883 (connection refused)"),
            .init(name: "store", ok: true, detail: "writable"),
        ]))
        let response = harness.call("GET", "/healthz")
        #expect(response.status == 503)
        #expect(harness.json(response)["reason"] == "broker: not connected to mqtt://127.0.0.1:1883 (connection refused)")
    }

    @Test func metricsAreInPrometheusTextFormat() throws {
        let harness = try ConsoleHarness()
        harness.move(52.52, 13.405)
        _ = harness.call("POST", "/pub", body: "{bad")
        let response = harness.call("GET", "/metrics")
        #expect(response.headers["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8")
        let text = String(decoding: response.bytes, as: UTF8.self)
        #expect(text.contains("# TYPE geotify_fixes_evaluated_total counter\ngeotify_fixes_evaluated_total 1\n"))
        #expect(text.contains("geotify_errors_total{kind=\"invalid_json\"} 1\n"))
        #expect(text.contains("# TYPE geotify_evaluation_latency_seconds histogram"))
        #expect(text.contains("geotify_healthy{check=\"broker\"} 1"))
    }
}
