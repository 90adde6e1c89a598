import Foundation
import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// The notification ids a lane gives: `<device>/<fence>/<event>/<fix time>`, the same for
/// the same notification and never the same for two. Fixes may share a time (OwnTracks'
/// `tst` is in whole seconds, a tracker without one is timed by the second it arrived
/// in, a message can come twice), and a fence may be entered and left more than once at
/// one time: the second entry (exit, dwell) at that time is `~2`, the third `~3`.
@Suite("Lane core: notification ids")
struct LaneCoreEventIDTests {
    static let device = "alice/phone"
    static let home = (52.52, 13.405)
    static let away = (52.50, 13.405)

    /// alice/phone's `home` with `rules` (JSON members, after a comma) and its events,
    /// and the fences of `others` (JSON objects, each after a comma).
    static func fences(_ rules: String = "", events: String = #""onEntryAndExit""#, others: String = "") -> String {
        """
        { "devices": { "alice/phone": [
            { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
              "note": "Welcome home", "eventType": \(events)\(rules) }\(others) ] } }
        """
    }

    /// No fences for alice/phone, as after `home` was deleted.
    static let withoutHome = #"{ "devices": { "alice/phone": [] } }"#

    /// The ids of the notifications in `effects`, in order.
    static func ids(_ effects: LaneEffects) -> [String] {
        effects.events.compactMap { $0["id"] as? String }
    }

    /// The id of alice/phone's notification of `event` at `fence` at `time`.
    static func id(_ event: String, _ time: Double, _ fence: String = "home") -> String {
        "\(device)/\(fence)/\(event)/\(Int(time))"
    }

    /// A lane whose alice/phone has had its first fix, away, and whose clock then moved
    /// on a minute.
    static func awayLane(_ fences: String) throws -> LaneFixture {
        var lane = try LaneFixture(fences: fences)
        _ = lane.ownTracks(device, away.0, away.1)
        lane.now += 60
        return lane
    }

    /// In, out, in and out again with one `tst` (no minimum duration): four notifications,
    /// the first entry and exit with the ids they always had, the second of each marked.
    @Test func aFenceEnteredAndLeftTwiceAtOneFixTimeGivesFourIDs() throws {
        var lane = try Self.awayLane(Self.fences())
        let time = lane.now
        var ids: [String] = []
        for inside in [true, false, true, false] {
            let (latitude, longitude) = inside ? Self.home : Self.away
            ids += Self.ids(lane.ownTracks(Self.device, latitude, longitude, tst: time))
        }
        #expect(ids == [
            Self.id("enter", time), Self.id("exit", time), Self.id("enter", time) + "~2", Self.id("exit", time) + "~2",
        ])
        #expect(lane.core.state(of: Self.device)?.fences.map(\.repeats) == [3], "outside, kept while fixes keep the time")
        _ = lane.ownTracks(Self.device, Self.away.0, Self.away.1, tst: time + 1)
        #expect(lane.core.state(of: Self.device)?.fences.isEmpty == true, "and forgotten at a fix of a later time")
        #expect(Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time + 1)) == [Self.id("enter", time + 1)])
    }

    /// Out, in and out again at one time from a stay begun earlier: the first exit ends
    /// the earlier stay, the second is a repeat.
    @Test func aSecondExitAtOneTimeIsMarkedThoughTheFirstEndedAnEarlierStay() throws {
        var lane = try Self.awayLane(Self.fences())
        _ = lane.ownTracks(Self.device, Self.home.0, Self.home.1)
        lane.now += 60
        let time = lane.now
        var ids: [String] = []
        for inside in [false, true, false] {
            let (latitude, longitude) = inside ? Self.home : Self.away
            ids += Self.ids(lane.ownTracks(Self.device, latitude, longitude, tst: time))
        }
        #expect(ids == [Self.id("exit", time), Self.id("enter", time), Self.id("exit", time) + "~2"])
    }

    /// A tracker that sends no time: its fixes are timed by the second they arrive in, so
    /// a fence entered, left and entered again within one second is entered twice at one
    /// time. Both entries get ids of their own: the delivery queue keeps one row for each
    /// target and id, and would have dropped the second.
    @Test func aTrackerWithoutTimeFlappingWithinOneSecondGivesEachNotificationItsID() throws {
        var lane = try Self.awayLane(Self.fences())
        let time = lane.now
        var ids: [String] = []
        for (offset, inside) in [(0.1, true), (0.4, false), (0.7, true)] {
            lane.now = time + offset
            let (latitude, longitude) = inside ? Self.home : Self.away
            let payload = JSONWriter().bytes(["lat": .number(latitude), "lon": .number(longitude), "acc": 5])
            ids += Self.ids(lane.handle([
                lane.inbound(Self.device, topic: "geotify/location/\(Self.device)", payload: payload, route: .location(.plain)),
            ]))
        }
        #expect(ids == [Self.id("enter", time), Self.id("exit", time), Self.id("enter", time) + "~2"])
    }

    /// Two fences entered by one fix, and a fix at the time of the one before that crosses
    /// nothing, keep the plain ids: only a second entry (exit, dwell) of one fence at one
    /// time is marked.
    @Test func fixesSharingATimeWithoutARepeatKeepThePlainIDs() throws {
        let garden = #", { "identifier": "garden", "latitude": 52.5205, "longitude": 13.405, "radius": 100, "note": "", "eventType": "onEntry" }"#
        var lane = try Self.awayLane(Self.fences(others: garden))
        let time = lane.now
        _ = lane.ownTracks(Self.device, Self.away.0 + 0.001, Self.away.1, tst: time)
        let entered = lane.ownTracks(Self.device, 52.5202, 13.405, tst: time)
        #expect(Set(Self.ids(entered)) == [Self.id("enter", time, "garden"), Self.id("enter", time)])
        #expect(Self.ids(lane.ownTracks(Self.device, 52.5202, 13.405, tst: time)).isEmpty, "the same fix again notifies nothing")
    }

    /// With a minimum duration the clock confirms each change; fixes of one time that go
    /// in, out and in again (a tracker whose clock stands still, or a late repeat) enter
    /// the fence twice at that time.
    @Test func changesTheClockConfirmsAtOneFixTimeAreToldApart() throws {
        var lane = try Self.awayLane(Self.fences(#", "minimumDuration": 120"#))
        let time = lane.now
        var ids: [String] = []
        for inside in [true, false, true] {
            let (latitude, longitude) = inside ? Self.home : Self.away
            ids += Self.ids(lane.ownTracks(Self.device, latitude, longitude, tst: time))
            ids += Self.ids(lane.advance(120))
        }
        #expect(ids == [Self.id("enter", time), Self.id("exit", time), Self.id("enter", time) + "~2"])
    }

    /// The clock fires a dwell before the device's next fixes arrive; they are older
    /// than the dwell and take the device out and back in at the time it entered, so its
    /// new stay dwells at the same time as the first.
    @Test func aStayBegunAgainAtTheSameTimeDwellsWithAnIDOfItsOwn() throws {
        var lane = try Self.awayLane(Self.fences(#", "dwell": 300"#, events: #"["onEntry", "onExit", "onDwell"]"#))
        let time = lane.now
        var ids = Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time))
        ids += Self.ids(lane.advance(300))
        ids += Self.ids(lane.ownTracks(Self.device, Self.away.0, Self.away.1, tst: time))
        ids += Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time))
        ids += Self.ids(lane.advance(300))
        #expect(ids == [
            Self.id("enter", time), Self.id("dwell", time + 300), Self.id("exit", time),
            Self.id("enter", time) + "~2", Self.id("dwell", time + 300) + "~2",
        ])
    }

    /// An edit of a fence notifies nothing by itself (a device that sends no fix is not
    /// evaluated again); the device's next fix is judged with the new fence, at its own
    /// time. When that fix repeats the time of the one before (a message sent again),
    /// moving the fence away and back enters it a second time at that time.
    @Test func aFenceMovedAwayAndBackUnderAStillDeviceEntersItAgainWithAnIDOfItsOwn() throws {
        var lane = try Self.awayLane(Self.fences())
        let time = lane.now
        var ids = Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time))
        try lane.edit(Self.fences().replacingOccurrences(of: #""latitude": 52.52"#, with: #""latitude": 52.53"#))
        #expect(lane.advance(60).events.isEmpty, "an edit alone evaluates nothing")
        ids += Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time))
        try lane.edit(Self.fences())
        #expect(lane.advance(60).events.isEmpty)
        ids += Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time))
        ids += Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time + 120))
        #expect(ids == [Self.id("enter", time), Self.id("exit", time), Self.id("enter", time) + "~2"])
    }

    /// The count of changes at one time is part of the saved state: a restart in the
    /// middle of a repeat goes on counting.
    @Test func theCountOfRepeatsSurvivesARestart() throws {
        var lane = try Self.awayLane(Self.fences())
        let time = lane.now
        _ = lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time)
        let left = lane.ownTracks(Self.device, Self.away.0, Self.away.1, tst: time)
        #expect(Self.ids(left) == [Self.id("exit", time)])
        let saved = try #require(left.saves[Self.device])
        var restarted = try LaneFixture(fences: Self.fences(), states: [Self.device: saved], named: [Self.device])
        restarted.now = lane.now + 5
        #expect(Self.ids(restarted.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time)) == [Self.id("enter", time) + "~2"])
    }

    /// A fence deleted and created again is new to the device: its first fix after
    /// establishes it, with the fence's initial trigger. A fix with the time of the one
    /// before (a repeat) does not: the entry it would notify has the id of the entry the
    /// deleted fence notified. The next fix does.
    @Test func aFenceCreatedAgainIsNotEstablishedByARepeatedFixTime() throws {
        let fences = Self.fences(#", "initialTrigger": "enter""#)
        var lane = try LaneFixture(fences: fences)
        let time = lane.now
        var ids = Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time))
        try lane.edit(Self.withoutHome)
        _ = lane.advance(1)
        try lane.edit(fences)
        _ = lane.advance(1)
        ids += Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time))
        ids += Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time + 2))
        #expect(ids == [Self.id("enter", time), Self.id("enter", time + 2)])
    }

    /// The same for a dwell: a stay established again at the time the deleted fence's
    /// stay began would dwell at the same time.
    @Test func aFenceCreatedAgainDoesNotDwellAgainAtTheSameTime() throws {
        let fences = Self.fences(#", "dwell": 300"#, events: #"["onEntry", "onExit", "onDwell"]"#)
        var lane = try LaneFixture(fences: fences)
        let time = lane.now
        _ = lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time)
        var ids = Self.ids(lane.advance(300))
        try lane.edit(Self.withoutHome)
        _ = lane.advance(1)
        try lane.edit(fences)
        _ = lane.advance(1)
        ids += Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time))
        ids += Self.ids(lane.advance(300))
        ids += Self.ids(lane.ownTracks(Self.device, Self.home.0, Self.home.1, tst: time + 400))
        ids += Self.ids(lane.advance(300))
        #expect(ids == [Self.id("dwell", time + 300), Self.id("dwell", time + 700)])
    }
}
