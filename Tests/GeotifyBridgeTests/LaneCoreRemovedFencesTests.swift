import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyStore

/// What a lane says when fences its devices had are gone (`LaneCore.leaveRemovedFences`),
/// through the pure core: the retained presence of every device with state is emptied,
/// whether or not the fence file names the device, after whatever the lane decided with
/// the earlier book, and after a start for what the persisted states still name.
@Suite("Lane core: removed fences")
struct LaneCoreRemovedFencesTests {
    /// Three shared fences every device has, and one device the file names.
    static let fences = """
        { "devices": { "alice/phone": [] },
          "shared": [
            { "identifier": "sa", "latitude": 20, "longitude": 20, "radius": 100, "eventType": "onEntryAndExit" },
            { "identifier": "sb", "latitude": 21, "longitude": 20, "radius": 100, "eventType": "onEntryAndExit" },
            { "identifier": "sc", "latitude": 22, "longitude": 20, "radius": 100, "eventType": "onEntryAndExit" } ] }
        """
    static let withoutShared = #"{ "devices": { "alice/phone": [] } }"#

    static func presenceRemovals(_ effects: LaneEffects) -> [String] {
        effects.outbox.filter { $0.topic.hasPrefix("geotify/presence/") && $0.payload.isEmpty && $0.retain && $0.qos == 1 }.map(\.topic)
    }

    /// The reviewer's case: devices the file does not name get the shared fences, and
    /// their presence (an `outside` from the first fix, an `inside`) is emptied when the
    /// shared fences go, as the named device's is; the fence one was inside leaves its
    /// state, its count and its state document.
    @Test func removingSharedFencesEmptiesThePresenceOfEveryDeviceWithState() throws {
        var lane = try LaneFixture(fences: Self.fences)
        for device in ["occ/one", "occ/two", "alice/phone"] { _ = lane.ownTracks(device, 0, 20) }
        lane.now += 60
        _ = lane.ownTracks("occ/one", 21, 20)
        _ = lane.ownTracks("occ/two", 22, 20)
        _ = lane.ownTracks("alice/phone", 22, 20)
        lane.now += 60
        _ = lane.ownTracks("occ/one", 0, 20)
        #expect(lane.core.state(of: "occ/two")?.isInside("sc") == true)
        try lane.edit(Self.withoutShared)
        let removed = lane.advance(1)
        #expect(Self.presenceRemovals(removed) == ["alice/phone", "occ/one", "occ/two"].flatMap { device in
            ["sa", "sb", "sc"].map { "geotify/presence/\(device)/\($0)" }
        })
        #expect(removed.saves["occ/two"]?.fences.isEmpty == true, "the state no longer names sc")
        #expect(lane.core.state(of: "occ/two")?.fences.isEmpty == true)
        #expect(removed.occupancy.contains(OccupancyChange(owner: "shared", fence: "sc", device: "occ/two", inside: false, fenceRemoved: true)))
        #expect(removed.outboxText("geotify/tracker/occ/two") == "not_home")
        #expect(removed.outboxText("geotify/state/occ/two")?.contains(#""inside":[]"#) == true)
        #expect(Self.presenceRemovals(lane.advance(1)).isEmpty, "once for each book")
    }

    /// A presence the lane decided with the earlier book (it read the book before the
    /// change came into force) is followed by the removal: it does not stay behind.
    @Test func aPresenceDecidedWithTheEarlierBookIsRemovedAfterIt() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("occ/two", 0, 20)
        lane.now += 60
        let old = lane.book
        try lane.edit(Self.withoutShared)
        var stale = LaneEffects()
        lane.core.handle([lane.ownTracksPosition("occ/two", 22, 20)], book: old, into: &stale)
        #expect(stale.outboxText("geotify/presence/occ/two/sc") == "inside")
        lane.now += 60
        let next = lane.ownTracks("occ/two", 22.0001, 20)
        #expect(next.outbox.first?.topic == "geotify/presence/occ/two/sa", "the removals come before anything decided with the new book")
        #expect(next.outboxText("geotify/presence/occ/two/sc") == "")
        #expect(!next.outbox.contains { $0.topic.hasPrefix("geotify/presence/") && !$0.payload.isEmpty })
    }

    /// A group's access to a set taken away: its members lose the set's presence, and the
    /// count of a fence still in the set loses them as a leaving does.
    @Test func aGroupLosingASetEmptiesItsMembersPresence() throws {
        let grouped = """
            { "devices": {}, "groups": { "vans": ["v/1"] },
              "shared": [ { "identifier": "depot", "latitude": 20, "longitude": 20, "radius": 100, "eventType": "onEntryAndExit", "group": "vans" } ] }
            """
        var lane = try LaneFixture(fences: grouped)
        _ = lane.ownTracks("v/1", 20, 20)
        try lane.edit(grouped.replacingOccurrences(of: #"["v/1"]"#, with: #"["v/2"]"#))
        let removed = lane.advance(1)
        #expect(Self.presenceRemovals(removed) == ["geotify/presence/v/1/depot"])
        #expect(removed.occupancy == [OccupancyChange(owner: "vans", fence: "depot", device: "v/1", inside: false)])
    }

    /// A fence removed while the bridge was stopped: the states loaded at start still name
    /// it, so its presence is emptied at the first tick, for a device the file does not
    /// name too.
    @Test func aFenceRemovedWhileStoppedIsEmptiedAtStart() throws {
        var before = try LaneFixture(fences: Self.fences)
        _ = before.ownTracks("occ/two", 0, 20)
        before.now += 60
        _ = before.ownTracks("occ/two", 22, 20)
        let state = try #require(before.core.state(of: "occ/two"))
        var lane = try LaneFixture(fences: Self.withoutShared, states: ["occ/two": state])
        let removed = lane.advance(1)
        #expect(Self.presenceRemovals(removed) == ["geotify/presence/occ/two/sc"])
        #expect(removed.saves["occ/two"]?.fences.isEmpty == true)
        #expect(removed.outboxText("geotify/tracker/occ/two") == "not_home")
        #expect(Self.presenceRemovals(lane.advance(1)).isEmpty)
    }

    /// A fence the file keeps, only edited (a larger radius), is not emptied for a device
    /// that is inside it.
    @Test func aFenceKeptIsNotEmptied() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("occ/one", 22, 20)
        try lane.edit(Self.fences.replacingOccurrences(of: #""radius": 100, "eventType": "onEntryAndExit" },"#, with: #""radius": 150, "eventType": "onEntryAndExit" },"#))
        #expect(Self.presenceRemovals(lane.advance(1)).isEmpty)
    }

    /// A command's own write: what it removed is cleared with the command's effects, not
    /// with whatever the lane handles next (a refused message then changes nothing).
    @Test func aFenceDeletedByACommandIsClearedWithIt() throws {
        var lane = try LaneFixture(fences: #"{ "devices": { "alice/phone": [ { "identifier": "home", "latitude": 20, "longitude": 20, "radius": 100, "eventType": "onEntryAndExit" } ] } }"#)
        _ = lane.ownTracks("alice/phone", 20, 20)
        let answered = lane.write(lane.command("alice/phone", #"{"action":"delete","fence":"home","confirm":true}"#))
        #expect(answered.outboxText("geotify/presence/alice/phone/home") == "")
        #expect(Self.presenceRemovals(lane.plain("alice/phone", 95, 20)).isEmpty)
    }
}
