import Testing
import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore

@Suite("Presence messages")
struct PresenceMessagesTests {
    let messages = PresenceMessages(topics: Topics())

    static func fence(_ identifier: String, note: String = "") -> Fence {
        Fence(identifier: identifier, region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100),
              note: note, eventType: .onEntry)
    }

    static let fences = [fence("desk", note: "At the desk"), fence("office", note: "At work"), fence("home", note: "Welcome home")]
    static let fix = Fix(device: "alice/phone", coordinate: Coordinate(latitude: 52.52, longitude: 13.405), accuracy: 12, timestamp: 1_700_000_060)

    static func state(inside: [String], badge: Int = 1, fix: Fix? = PresenceMessagesTests.fix) -> DeviceState {
        DeviceState(badge: badge, lastFix: fix, revision: 1, fences: inside.map { FenceState(fence: $0, since: 1_700_000_000) })
    }

    func text(_ message: OutboxMessage) -> String {
        String(decoding: message.payload, as: UTF8.self)
    }

    @Test func theStateDocument() throws {
        let message = messages.state(of: "alice/phone", Self.state(inside: ["home", "office"]), fences: Self.fences)
        #expect(message.topic == "geotify/state/alice/phone")
        #expect(message.retain && message.qos == 0, "a last value, republished after each connection")
        #expect(text(message) == #"{"device":"alice/phone","tracker":"office","inside":[{"fence":"office","note":"At work"},{"fence":"home","note":"Welcome home"}],"badge":1,"lat":52.52,"lon":13.405,"acc":12,"tst":1700000060,"latitude":52.52,"longitude":13.405,"gps_accuracy":12}"#)
    }

    @Test func theStateDocumentBeforeAnyFixAndWithoutAccuracy() {
        let empty = messages.state(of: "van/7", DeviceState(), fences: [])
        #expect(text(empty) == #"{"device":"van/7","tracker":"not_home","inside":[],"badge":0}"#)
        let fix = Fix(device: "van/7", coordinate: Coordinate(latitude: 1, longitude: 2), timestamp: 5)
        let noAccuracy = messages.state(of: "van/7", Self.state(inside: [], badge: 0, fix: fix), fences: [])
        #expect(text(noAccuracy) == #"{"device":"van/7","tracker":"not_home","inside":[],"badge":0,"lat":1,"lon":2,"tst":5,"latitude":1,"longitude":2}"#)
    }

    @Test func fencesNoLongerInTheBookAreLeftOut() {
        let message = messages.state(of: "alice/phone", Self.state(inside: ["gone", "home"]), fences: Self.fences)
        #expect(text(message).contains(#""inside":[{"fence":"home","note":"Welcome home"}]"#))
    }

    @Test func presenceOfAFence() {
        let inside = messages.presence(of: "alice/phone", fence: "home", inside: true)
        let outside = messages.presence(of: "alice/phone", fence: "desk", inside: false)
        #expect([inside, outside].map(\.topic) == ["geotify/presence/alice/phone/home", "geotify/presence/alice/phone/desk"])
        #expect([inside, outside].map(text) == ["inside", "outside"])
        #expect([inside, outside].allSatisfy { $0.retain && $0.qos == 0 })
    }

    /// The tracker message of `state`, as a lane makes it.
    func tracker(_ state: DeviceState, fences: [Fence]) -> OutboxMessage {
        messages.tracker(of: "alice/phone", showing: PresenceMessages.trackerState(of: state, fences: fences))
    }

    @Test func theTrackerShowsTheFirstFenceOfTheFileTheDeviceIsIn() {
        let nested = tracker(Self.state(inside: ["office", "desk"]), fences: Self.fences)
        #expect(nested.topic == "geotify/tracker/alice/phone")
        #expect(text(nested) == "desk")
        #expect(nested.retain && nested.qos == 0)
        #expect(text(tracker(Self.state(inside: ["home"]), fences: Self.fences)) == "home")
        #expect(text(tracker(Self.state(inside: []), fences: Self.fences)) == "not_home")
        #expect(PresenceMessages.trackedFence(Self.state(inside: ["home", "office"]), fences: Self.fences)?.identifier == "office")
    }

    @Test func theBadgeIsALastValue() {
        let message = OutboundMessages(topics: Topics()).badge(3, of: "alice/phone")
        #expect(message.topic == "geotify/badge/alice/phone")
        #expect(text(message) == "3")
        #expect(message.retain && message.qos == 0)
    }

    @Test func occupancyIsACount() {
        let message = messages.occupancy(owner: "family", fence: "home", count: 3)
        #expect(message.topic == "geotify/occupancy/family/home")
        #expect(text(message) == "3")
        #expect(message.retain && message.qos == 1)
    }

    @Test func theTopicPrefixIsHonoured() {
        let custom = PresenceMessages(topics: Topics(prefix: "geo"))
        #expect(custom.stateTopic("a/b") == "geo/state/a/b")
        #expect(custom.presenceTopic("a/b", fence: "f") == "geo/presence/a/b/f")
        #expect(custom.trackerTopic("a/b") == "geo/tracker/a/b")
        #expect(custom.occupancyTopic(owner: "o", fence: "f") == "geo/occupancy/o/f")
    }

    @Test func removalsClearWhatRemovedFencesAndDevicesLeftRetained() {
        let previous = ["alice/phone": Self.fences, "van/7": [Self.fence("depot")]]
        let current = ["alice/phone": [Self.fence("home")]]
        let removals = messages.removals(previous: previous, current: current)
        #expect(removals.map(\.topic) == [
            "geotify/state/van/7",
            "geotify/tracker/van/7",
            "geotify/presence/van/7/depot",
            "geotify/badge/van/7",
            "geotify/presence/alice/phone/desk",
            "geotify/presence/alice/phone/office",
        ])
        #expect(removals.allSatisfy { $0.payload.isEmpty && $0.retain && $0.qos == 1 }, "no later message would repeat a removal: QoS 1")
        #expect(messages.removals(previous: previous, current: previous).isEmpty)
    }

    @Test func homeAssistantLosesTheEntitiesBeforeTheirTopicsEmpty() {
        let discovery = HomeAssistantDiscovery(topics: Topics())
        let previous = ["alice/phone": Self.fences, "van/7": [Self.fence("depot")]]
        let current = ["alice/phone": [Self.fence("home")]]
        let removals = messages.removals(
            previous: previous, current: current, discovery: discovery,
            previousShared: ["shared": [Self.fence("school")]], currentShared: [:])
        let configs = discovery.removals(
            previous: previous, current: current, previousShared: ["shared": [Self.fence("school")]], currentShared: [:])
        #expect(configs.count == 5 + 2 + 2)
        #expect(Array(removals.prefix(configs.count)) == configs)
        #expect(removals.dropFirst(configs.count).map(\.topic) == messages.removals(previous: previous, current: current).map(\.topic))
        let lastConfig = removals.lastIndex { $0.topic.hasPrefix("homeassistant/") } ?? 0
        let firstTopic = removals.firstIndex { $0.topic.hasPrefix("geotify/") } ?? 0
        #expect(lastConfig < firstTopic)
    }

    @Test func theTrackerSaysHomeANameOrTheIdentifier() {
        let house = Fence(identifier: "house", region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100),
                          note: "", eventType: .onEntry, name: "Our house", home: true)
        let shop = Fence(identifier: "shop", region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100),
                         note: "Shopping", eventType: .onEntry, name: "Supermarket")
        #expect(PresenceMessages.trackerState(house) == "home")
        #expect(PresenceMessages.trackerState(shop) == "Supermarket")
        #expect(PresenceMessages.trackerState(Self.fence("home")) == "home")
        #expect(PresenceMessages.trackerState(Self.fence("office")) == "office")
        #expect(PresenceMessages.trackerState(nil) == "not_home")
        #expect(text(tracker(Self.state(inside: ["shop"]), fences: [shop])) == "Supermarket")
        #expect(text(messages.state(of: "alice/phone", Self.state(inside: ["shop"]), fences: [shop])).contains(
            #""inside":[{"fence":"shop","name":"Supermarket","note":"Shopping"}]"#))
    }
}
