import Testing
import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore

@Suite("OwnTracks transitions")
struct OwnTracksTransitionTests {
    let transitions = OwnTracksTransition(topics: OwnTracksTopics())

    static let home = Fence(
        identifier: "home", region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100),
        note: "Welcome home", eventType: [.onEntry, .onExit])

    static func notification(
        _ kind: TransitionKind, device: String = "alice/phone", accuracy: Double? = 12, time: Double = 1_700_000_060, fence: Fence = home
    ) -> Notification {
        let fix = Fix(device: device, coordinate: Coordinate(latitude: 52.52, longitude: 13.405), accuracy: accuracy, timestamp: time)
        return Notification(transition: Transition(fence: fence, kind: kind, fix: fix), badge: 1)
    }

    @Test func topicsFollowTheFilter() {
        let standard = OwnTracksTopics()
        #expect(standard.base(of: "alice/phone") == "owntracks/alice/phone")
        #expect(standard.event(of: "alice/phone") == "owntracks/alice/phone/event")
        #expect(standard.command(of: "alice/phone") == "owntracks/alice/phone/cmd")
        #expect(standard.base(of: "van") == nil)
        #expect(standard.base(of: "van/7/x") == nil)
        let deep = OwnTracksTopics(filter: "ot/#")
        #expect(deep.base(of: "a/b/c") == "ot/a/b/c")
        let middle = OwnTracksTopics(filter: "+/tracks/+")
        #expect(middle.event(of: "alice/phone") == "alice/tracks/phone/event")
    }

    /// A device's levels are taken in place by the filter's wildcards: empty levels count,
    /// too few or too many levels give no topic, whatever the filter's shape.
    @Test func devicesLevelsFillTheFiltersWildcards() {
        let standard = OwnTracksTopics()
        #expect(standard.base(of: "alice/") == "owntracks/alice/")
        #expect(standard.base(of: "/") == "owntracks//")
        #expect(standard.base(of: "") == nil)
        let bare = OwnTracksTopics(filter: "+/+")
        #expect(bare.base(of: "a/b") == "a/b")
        #expect(bare.event(of: "a/b") == "a/b/event")
        #expect(bare.base(of: "a") == nil)
        let single = OwnTracksTopics(filter: "fleet/north/+")
        #expect(single.command(of: "van") == "fleet/north/van/cmd")
        #expect(single.base(of: "van/7") == nil)
        let leadingEmpty = OwnTracksTopics(filter: "/+/+")
        #expect(leadingEmpty.base(of: "a/b") == "/a/b")
        let literalAfter = OwnTracksTopics(filter: "+/+/x")
        #expect(literalAfter.base(of: "alice/") == "alice//x")
        #expect(literalAfter.base(of: "/") == "//x")
        #expect(literalAfter.base(of: "") == nil)
        #expect(literalAfter.base(of: "a/b/c") == nil)
        let rest = OwnTracksTopics(filter: "ot/+/#")
        #expect(rest.base(of: "a/b//c") == "ot/a/b//c")
        #expect(rest.base(of: "a/") == "ot/a/")
        #expect(rest.base(of: "a") == nil)
    }

    @Test func anEntry() throws {
        let message = try #require(transitions.message(Self.notification(.enter)))
        #expect(message.topic == "owntracks/alice/phone/event")
        #expect(message.qos == 1 && !message.retain)
        let wtst = FenceExport.ownTracksCreationTime(of: "home")
        #expect(String(decoding: message.payload, as: UTF8.self) ==
            #"{"_type":"transition","event":"enter","desc":"home","rid":"home","wtst":\#(wtst),"lat":52.52,"lon":13.405,"acc":12,"tst":1700000060,"tid":"ne","t":"c"}"#)
    }

    @Test func aNamedFenceCarriesItsNameAsDescAndItsRegionID() throws {
        let supermarket = Fence(
            identifier: "supermarket", region: .circle(center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 80),
            note: "", eventType: .onEntry, name: "Supermarket", regionID: "a1b2c3")
        let message = try #require(transitions.message(Self.notification(.enter, fence: supermarket)))
        let object = try #require(try JSONParser().parse(message.payload).objectValue)
        #expect(object["desc"] == "Supermarket")
        #expect(object["rid"] == "a1b2c3")
        #expect(object["wtst"] == .number(Double(FenceExport.ownTracksCreationTime(of: "supermarket"))))
    }

    @Test func anExitIsALeave() throws {
        let message = try #require(transitions.message(Self.notification(.exit)))
        let object = try #require(try JSONParser().parse(message.payload).objectValue)
        #expect(object["event"] == "leave")
        #expect(object["_type"] == "transition")
    }

    @Test func kindsWithoutAnOwnTracksEventGiveNoMessage() throws {
        let dwell = try #require(TransitionKind(rawValue: "dwell"))
        #expect(transitions.message(Self.notification(dwell)) == nil)
    }

    @Test func unknownAccuracyIsLeftOutAndTimesAreWholeSeconds() throws {
        let message = try #require(transitions.message(Self.notification(.enter, accuracy: nil, time: 1_700_000_060.75)))
        let object = try #require(try JSONParser().parse(message.payload).objectValue)
        #expect(object["acc"] == nil)
        #expect(object["tst"] == 1_700_000_060)
    }

    @Test func devicesOutsideTheFilterGetNoMessage() {
        #expect(transitions.message(Self.notification(.enter, device: "van/7/x")) == nil)
    }

    @Test func theTrackerIDIsTheLastTwoCharacters() {
        #expect(OwnTracksTransition.trackerID(of: "alice/phone") == "ne")
        #expect(OwnTracksTransition.trackerID(of: "a/b") == "/b")
        #expect(OwnTracksTransition.trackerID(of: "x") == "x")
    }
}
