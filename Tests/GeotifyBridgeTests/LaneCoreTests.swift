import Foundation
import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyDelivery
import GeotifyJSON
import GeotifyStore

/// What a lane decides for positions, through the pure core: no broker, no database, no
/// thread, no sleeping.
@Suite("Lane core: positions")
struct LaneCoreTests {
    static let fences = """
        { "devices": {
            "alice/phone": [
              { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
                "note": "Welcome home", "eventType": "onEntryAndExit" },
              { "identifier": "office", "latitude": 52.50, "longitude": 13.30, "radius": 100,
                "note": "", "eventType": "onEntry" } ],
            "bob/phone": [] },
          "groups": { "family": ["alice/phone", "bob/phone"] },
          "shared": [
            { "identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150,
              "note": "At school", "eventType": "onEntryAndExit", "group": "family" } ] }
        """
    static let home = (52.52, 13.405)
    static let school = (52.53, 13.38)
    static let away = (52.50, 13.405)

    @Test func theFirstFixSaysWhereTheDeviceIsWithoutANotification() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let effects = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        #expect(effects.events.isEmpty, "a first fix never notifies")
        #expect(effects.outboxTopics == [
            "geotify/badge/alice/phone", "geotify/presence/alice/phone/school",
            "geotify/presence/alice/phone/home", "geotify/presence/alice/phone/office",
            "geotify/state/alice/phone", "geotify/tracker/alice/phone",
        ])
        #expect(effects.outboxText("geotify/badge/alice/phone") == "0")
        #expect(effects.outboxText("geotify/presence/alice/phone/home") == "outside")
        #expect(effects.outboxText("geotify/presence/alice/phone/school") == "outside", "shared fences too, though far away")
        #expect(effects.outboxText("geotify/tracker/alice/phone") == "not_home")
        #expect(effects.saves["alice/phone"]?.lastFix?.coordinate.latitude == Self.away.0)
        #expect(effects.counters[.fixesEvaluated] == 1)
    }

    @Test func aFirstFixInsideSetsPresenceQuietly() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let effects = lane.ownTracks("alice/phone", Self.home.0, Self.home.1)
        #expect(effects.events.isEmpty)
        #expect(effects.outboxText("geotify/presence/alice/phone/home") == "inside")
        #expect(effects.outboxText("geotify/tracker/alice/phone") == "home")
        let state = try #require(effects.outboxText("geotify/state/alice/phone"))
        #expect(state.contains(#""tracker":"home","inside":[{"fence":"home","note":"Welcome home"}]"#))
    }

    @Test func anEntryPublishesTheNotificationThenTheRetainedTopics() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        lane.now += 60
        let effects = lane.ownTracks("alice/phone", Self.home.0, Self.home.1)
        #expect(effects.outboxTopics == [
            "geotify/event/alice/phone", "owntracks/alice/phone/event", "geotify/badge/alice/phone",
            "geotify/presence/alice/phone/home", "geotify/state/alice/phone", "geotify/tracker/alice/phone",
        ], "the state document (with the location and the position) comes with the tracker, once")
        #expect(effects.outbox.filter { $0.topic == "geotify/state/alice/phone" }.count == 1, "one state document per transition")
        let state = try #require(effects.outboxText("geotify/state/alice/phone"))
        #expect(state.contains(#""tracker":"home""#) && state.contains(#""latitude":52.52,"longitude":13.405"#),
                "the new location and the new position in the same message")
        let event = try #require(effects.events.first)
        #expect(event["event"] as? String == "enter")
        #expect(event["note"] as? String == "Welcome home")
        #expect(event["badge"] as? Int == 1)
        #expect(event["id"] as? String == "alice/phone/home/enter/\(Int(lane.now))")
        #expect(effects.outboxText("geotify/badge/alice/phone") == "1")
        #expect(effects.saves["alice/phone"]?.badge == 1, "the state that caused the notification is committed with it")
        #expect(effects.counters[.transitions] == 1 && effects.counters[.notifications] == 1)
    }

    /// A notification is queued, in the commit that decides it, for each delivery target
    /// whose filter lets it through, with the payload and event id published with it.
    @Test func aNotificationIsQueuedForEachTargetItsFilterLetsThrough() throws {
        let notify = try DeliverySettings(
            parsing: try JSONParser().parse(#"""
                {"targets": [{"name": "everything", "type": "webhook", "url": "http://127.0.0.1:1/everything", "secret": {"env": "SECRET"}},
                             {"name": "school", "type": "webhook", "url": "http://127.0.0.1:1/school", "secret": {"env": "SECRET"},
                              "fences": ["school"]}]}
                """#),
            file: "geotify.json", environment: ["SECRET": "s3cret"])
        var lane = try LaneFixture(fences: Self.fences) { $0.notify = notify }
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        let effects = lane.ownTracks("alice/phone", Self.home.0, Self.home.1)
        let event = try #require(effects.outbox.first { $0.topic == "geotify/event/alice/phone" })
        #expect(effects.deliveries.map(\.target) == ["everything"])
        #expect(effects.deliveries.first?.payload == event.payload)
        #expect(effects.deliveries.first?.eventID == "alice/phone/home/enter/\(Int(lane.now))")
        #expect(lane.ownTracks("alice/phone", Self.home.0, Self.home.1).deliveries.isEmpty, "no transition, nothing to deliver")
    }

    @Test func onlyOwnTracksDevicesGetOwnTracksTransitions() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.plain("alice/phone", Self.away.0, Self.away.1)
        lane.now += 60
        let effects = lane.plain("alice/phone", Self.home.0, Self.home.1)
        #expect(effects.events.count == 1)
        #expect(!effects.outboxTopics.contains { $0.hasPrefix("owntracks/") })
    }

    @Test func lastFixesAreSavedAShareAtATime() throws {
        var lane = try LaneFixture(fences: Self.fences)
        for device in ["alice/phone", "bob/phone"] {
            _ = lane.ownTracks(device, Self.away.0, Self.away.1)
            lane.now += 30
            _ = lane.ownTracks(device, Self.away.0 + 0.001, Self.away.1)
        }
        var first = LaneEffects(), second = LaneEffects(), third = LaneEffects()
        #expect(lane.core.saveFixes(into: &first, limit: 1), "one of two saved: more are left")
        #expect(!lane.core.saveFixes(into: &second, limit: 1))
        #expect(!lane.core.saveFixes(into: &third, limit: 1))
        #expect(Set(first.saves.keys).union(second.saves.keys) == ["alice/phone", "bob/phone"] && first.saves.count == 1)
        #expect(third.saves.isEmpty)
    }

    @Test func aMoveThatCrossesNothingIsSavedLaterAndPublishesNothing() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        lane.now += 30
        let effects = lane.ownTracks("alice/phone", Self.away.0 + 0.001, Self.away.1)
        #expect(effects.outbox.isEmpty && effects.saves.isEmpty, "no state a restart needs changed")
        var flush = LaneEffects()
        lane.core.saveFixes(into: &flush)
        #expect(flush.saves["alice/phone"]?.lastFix?.coordinate.latitude == Self.away.0 + 0.001, "the last fix is saved with the next flush")
        var again = LaneEffects()
        lane.core.saveFixes(into: &again)
        #expect(again.saves.isEmpty, "and only once")
    }

    /// Leaving a fence that notifies only on entry (office) notifies nothing and leaves
    /// the badge as it was, yet where the device is changed: a restart needs that, so
    /// the state is saved with the fix, and the next flush has nothing left to save.
    @Test func aCrossingThatNotifiesNothingIsSavedAtOnceAndOnlyOnce() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.50, 13.30)
        #expect(lane.core.state(of: "alice/phone")?.fences.first { $0.fence == "office" }?.inside == true)
        var flush = LaneEffects()
        lane.core.saveFixes(into: &flush)
        #expect(flush.saves.isEmpty, "the first fix was saved with it")
        lane.now += 30
        let effects = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        #expect(effects.events.isEmpty && effects.outboxText("geotify/badge/alice/phone") == nil)
        let saved = try #require(effects.saves["alice/phone"], "saved with the fix, not with the next flush")
        #expect(!saved.fences.contains { $0.fence == "office" && $0.inside }, "no longer in the office")
        #expect(saved.lastFix?.coordinate.longitude == Self.away.1)
        var again = LaneEffects()
        lane.core.saveFixes(into: &again)
        #expect(again.saves.isEmpty, "nothing is saved twice")
    }

    /// The revision of the fences a device has seen is state a restart needs (a fence
    /// added after it is looked at as new, `DeviceState.hasSeen`), so the first fix after
    /// a fence was added far away is saved at once, though it crosses nothing.
    /// The same holds after a shared fence was added far away, which leaves no entry in
    /// the state: after a restart that lost the revision, an entry into it would be taken
    /// for the device's first look at it, and established without a notification.
    @Test(arguments: [false, true])
    func theFirstFixAfterAFenceWasAddedIsSavedAtOnce(shared: Bool) throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        let seen = try #require(lane.core.state(of: "alice/phone")?.revision)
        if shared {
            let withMuseum = Self.fences.replacingOccurrences(of: #""group": "family" } ] }"#, with: """
                "group": "family" },
                { "identifier": "museum", "latitude": 48.14, "longitude": 11.58, "radius": 100, "eventType": "onEntry" } ] }
                """)
            #expect(withMuseum.contains("museum"))
            try lane.edit(withMuseum)
            _ = lane.advance(0.2)
        } else {
            try Self.addGym(to: &lane)
        }
        lane.now += 30
        let effects = lane.ownTracks("alice/phone", Self.away.0 + 0.001, Self.away.1)
        #expect(effects.events.isEmpty)
        let saved = try #require(effects.saves["alice/phone"], "saved with the fix, not with the next flush")
        #expect(try #require(saved.revision) > seen)
        #expect(saved.lastFix?.coordinate.latitude == Self.away.0 + 0.001)
    }

    /// Adds a fence "gym" to alice/phone's, far from everything (Munich), and lets the
    /// lane take the edited file.
    static func addGym(to lane: inout LaneFixture) throws {
        try lane.edit(Self.fences.replacingOccurrences(of: #""note": "", "eventType": "onEntry" } ],"#, with: """
            "note": "", "eventType": "onEntry" },
              { "identifier": "gym", "latitude": 48.14, "longitude": 11.58, "radius": 100, "eventType": "onEntry" } ],
            """))
        _ = lane.advance(0.2)
    }

    /// A lane with Home Assistant on and the tracker throttled to 60 s and 50 m, whose
    /// alice/phone has had its first fix, away from its fences.
    static func trackedAway() throws -> LaneFixture {
        var lane = try LaneFixture(fences: Self.fences) {
            $0.homeAssistantEnabled = true
            $0.trackerInterval = 60
            $0.trackerDistance = 50
        }
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        return lane
    }

    @Test func withHomeAssistantTheTrackerFollowsTheDeviceThrottled() throws {
        var lane = try Self.trackedAway()
        lane.now += 30
        #expect(lane.ownTracks("alice/phone", Self.away.0 + 0.01, Self.away.1).outbox.isEmpty, "too soon")
        lane.now += 40
        #expect(lane.ownTracks("alice/phone", Self.away.0 + 0.0001, Self.away.1).outbox.isEmpty, "not far enough from the last published position")
        lane.now += 60
        let effects = lane.ownTracks("alice/phone", Self.away.0 - 0.02, Self.away.1)
        // The tracker topic still says not_home, as retained: the state document alone moves.
        #expect(effects.outboxTopics == ["geotify/state/alice/phone"])
        #expect(effects.outboxText("geotify/state/alice/phone")?.contains(#""latitude":52.48"#) == true)
        #expect(effects.events.isEmpty)
    }

    /// "At most once per `trackerInterval` seconds": a position exactly that long after
    /// the last one published, and far enough from it, is published.
    @Test func theTrackerFollowsAgainExactlyOneIntervalLater() throws {
        var lane = try Self.trackedAway()
        lane.now += 60
        let effects = lane.ownTracks("alice/phone", Self.away.0 + 0.01, Self.away.1)
        #expect(effects.outboxTopics == ["geotify/state/alice/phone"])
    }

    /// "Only once the device moved at least `trackerDistance`": a position exactly that
    /// far from the last one published, an interval later, is published.
    @Test func theTrackerFollowsAPositionExactlyTheDistanceAway() throws {
        let moved = Coordinate(latitude: Self.away.0 + 0.01, longitude: Self.away.1)
        let distance = Geodesy.sphericalDistance(Coordinate(latitude: Self.away.0, longitude: Self.away.1), moved)
        var lane = try LaneFixture(fences: Self.fences) {
            $0.homeAssistantEnabled = true
            $0.trackerInterval = 60
            $0.trackerDistance = distance
        }
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        lane.now += 60
        #expect(lane.ownTracks("alice/phone", moved.latitude, moved.longitude).outboxTopics == ["geotify/state/alice/phone"])
    }

    /// The tracker topic is a retained last value: published when what it says changes
    /// (and after each connection, `LaneCoreTimerTests`), not again with every position
    /// the state document follows, which would be a message a position saying nothing new.
    @Test func theTrackerTopicIsPublishedWhenItChanges() throws {
        var lane = try Self.trackedAway()
        var shown: [String] = []
        for (step, latitude) in [52.40, 52.52, 52.60, 52.52, 52.40, 52.30].enumerated() {
            lane.now += 120
            let effects = lane.ownTracks("alice/phone", latitude, 13.405)
            #expect(effects.outboxTopics.contains("geotify/state/alice/phone"), "step \(step): the state document follows each")
            if let tracker = effects.outboxText("geotify/tracker/alice/phone") { shown.append("\(step) \(tracker)") }
        }
        #expect(shown == ["1 home", "2 not_home", "3 home", "4 not_home"])
    }

    /// A fix that enters two nested fences at once notifies twice; the badge topic ends
    /// at the badge of the last notification, the one the device shows.
    @Test func twoNotificationsOfOneFixLeaveTheBadgeOfTheLast() throws {
        let nested = """
            { "devices": { "alice/phone": [
                { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "Home", "eventType": "onEntry" },
                { "identifier": "street", "latitude": 52.52, "longitude": 13.405, "radius": 300, "note": "Street", "eventType": "onEntry" } ] } }
            """
        var lane = try LaneFixture(fences: nested)
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        lane.now += 60
        let effects = lane.ownTracks("alice/phone", Self.home.0, Self.home.1)
        #expect(effects.events.map { $0["badge"] as? Int } == [1, 2])
        #expect(effects.outbox.filter { $0.topic == "geotify/badge/alice/phone" }.count == 1, "one badge message a fix")
        #expect(effects.outboxText("geotify/badge/alice/phone") == "2")
    }

    /// A shared set of exactly `maximumFencesPerDevice` fences is still announced fence by
    /// fence, as Home Assistant's entities are (`FenceBook.announcedSharedFences`): a
    /// device's first fix says it is outside each, whether the fix was near one or not.
    static let sharedAtTheLimit = """
        { "devices": { "alice/phone": [
            { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "", "eventType": "onEntry" } ] },
          "groups": { "family": ["alice/phone"] },
          "shared": [
            { "identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150, "note": "", "eventType": "onEntry", "group": "family" },
            { "identifier": "library", "latitude": 52.40, "longitude": 13.10, "radius": 150, "note": "", "eventType": "onEntry", "group": "family" } ] }
        """

    @Test func aSharedSetOfExactlyTheLimitIsAnnouncedAtTheFirstFix() throws {
        var lane = try LaneFixture(fences: Self.sharedAtTheLimit) { $0.limits.maximumFencesPerDevice = 2 }
        let effects = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        #expect(effects.outboxText("geotify/presence/alice/phone/school") == "outside")
        #expect(effects.outboxText("geotify/presence/alice/phone/library") == "outside")
        var over = try LaneFixture(fences: Self.sharedAtTheLimit) { $0.limits.maximumFencesPerDevice = 1 }
        #expect(!over.ownTracks("alice/phone", Self.away.0, Self.away.1).outboxTopics.contains { $0.hasSuffix("/school") || $0.hasSuffix("/library") },
                "one fence more than the limit: the set is evaluated, not announced")
    }

    /// A device with state from before the shared set was added (its revision is older)
    /// first sees a fence of it when a fix comes near: the relation it then establishes,
    /// outside, is published when the set is announced, at exactly the limit too.
    @Test func aSharedFenceFirstSeenNearbyIsAnnouncedAtExactlyTheLimit() throws {
        var earlier = DeviceState(badge: 0, revision: 0, fences: [])
        earlier.lastFix = Fix(device: "alice/phone", coordinate: Coordinate(latitude: Self.away.0, longitude: Self.away.1), accuracy: 5, timestamp: 1_699_999_000)
        // In the school's bounding box, about 190 m from its centre: outside its 150 m.
        let near = (Self.school.0 + 0.0012, Self.school.1 + 0.002)
        var lane = try LaneFixture(fences: Self.sharedAtTheLimit, settings: { $0.limits.maximumFencesPerDevice = 2 }, states: ["alice/phone": earlier])
        let effects = lane.ownTracks("alice/phone", near.0, near.1)
        #expect(effects.events.isEmpty)
        #expect(effects.outboxText("geotify/presence/alice/phone/school") == "outside", "\(effects.outboxTopics)")
        var over = try LaneFixture(fences: Self.sharedAtTheLimit, settings: { $0.limits.maximumFencesPerDevice = 1 }, states: ["alice/phone": earlier])
        #expect(over.ownTracks("alice/phone", near.0, near.1).outboxText("geotify/presence/alice/phone/school") == nil)
    }

    /// A first fix near a shared fence (inside its bounding box, outside the circle)
    /// establishes the fence as outside; that is announced once, not also as one of the
    /// shared fences a new device has not yet seen.
    @Test func aFirstFixNearASharedFenceAnnouncesItOnce() throws {
        var lane = try LaneFixture(fences: Self.fences)
        // About 190 m from the school's centre: outside its 150 m, inside its box.
        let effects = lane.ownTracks("alice/phone", Self.school.0 + 0.0012, Self.school.1 + 0.002)
        #expect(effects.outboxTopics.filter { $0 == "geotify/presence/alice/phone/school" }.count == 1, "\(effects.outboxTopics)")
        #expect(effects.outboxText("geotify/presence/alice/phone/school") == "outside")
    }

    /// A first fix inside one of the device's own fences still tells the shared fences
    /// it is outside of, each once.
    @Test func aFirstFixInsideAnOwnFenceAnnouncesTheSharedFencesItIsOutsideOf() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let effects = lane.ownTracks("alice/phone", Self.home.0, Self.home.1)
        #expect(effects.outboxText("geotify/presence/alice/phone/home") == "inside")
        #expect(effects.outboxTopics.filter { $0 == "geotify/presence/alice/phone/school" }.count == 1, "\(effects.outboxTopics)")
        #expect(effects.outboxText("geotify/presence/alice/phone/school") == "outside")
    }

    /// A fence added for a device already tracked has its presence told by the device's
    /// next fix, also when that fix crosses another fence: the new fence's relation is
    /// established (no transition) beside the other's entry.
    @Test func aFenceAddedIsAnnouncedByTheNextFixThoughItCrossesAnotherFence() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        try Self.addGym(to: &lane)
        lane.now += 60
        let effects = lane.ownTracks("alice/phone", Self.home.0, Self.home.1)
        #expect(effects.events.map { $0["fence"] as? String } == ["home"])
        let presences = effects.outboxTopics.filter { $0.hasPrefix("geotify/presence/") }
        #expect(presences == ["geotify/presence/alice/phone/home", "geotify/presence/alice/phone/gym"])
        #expect(effects.outboxText("geotify/presence/alice/phone/home") == "inside")
        #expect(effects.outboxText("geotify/presence/alice/phone/gym") == "outside")
    }

    /// A first fix inside a fence whose `initialTrigger` is `enter` notifies the entry,
    /// and the fence's presence is told once, by the transition, not again as newly known.
    @Test func aFirstFixEnteringByTheInitialTriggerTellsItsPresenceOnce() throws {
        let fences = Self.fences.replacingOccurrences(of: #""note": "Welcome home", "eventType": "onEntryAndExit""#,
                                                      with: #""note": "Welcome home", "eventType": "onEntryAndExit", "initialTrigger": "enter""#)
        var lane = try LaneFixture(fences: fences)
        let effects = lane.ownTracks("alice/phone", Self.home.0, Self.home.1)
        #expect(effects.events.map { $0["event"] as? String } == ["enter"])
        #expect(effects.outboxTopics.filter { $0 == "geotify/presence/alice/phone/home" }.count == 1, "\(effects.outboxTopics)")
        #expect(effects.outboxText("geotify/presence/alice/phone/home") == "inside")
    }

    /// Inside one of its own fences and a shared fence around it, a device's tracker
    /// shows its own fence, and the state document lists its own fences first: a device's
    /// own fences are the specific ones (`LaneCore.relevantFences`).
    @Test func theTrackerPrefersTheDevicesOwnFenceToASharedOne() throws {
        let around = """
            { "devices": { "alice/phone": [
                { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "Home", "eventType": "onEntry" } ] },
              "groups": { "family": ["alice/phone"] },
              "shared": [
                { "identifier": "quarter", "latitude": 52.52, "longitude": 13.405, "radius": 500, "note": "Quarter", "eventType": "onEntry", "group": "family" } ] }
            """
        var lane = try LaneFixture(fences: around)
        let effects = lane.ownTracks("alice/phone", Self.home.0, Self.home.1)
        #expect(effects.outboxText("geotify/tracker/alice/phone") == "home")
        let state = try #require(effects.outboxText("geotify/state/alice/phone"))
        #expect(state.contains(#""tracker":"home","inside":[{"fence":"home","note":"Home"},{"fence":"quarter","note":"Quarter"}]"#), "\(state)")
    }

    @Test func sharedFencesChangeOccupancy() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("bob/phone", Self.away.0, Self.away.1)
        lane.now += 60
        let enter = lane.ownTracks("bob/phone", Self.school.0, Self.school.1)
        #expect(enter.occupancy == [OccupancyChange(owner: "family", fence: "school", device: "bob/phone", inside: true)])
        lane.now += 60
        let exit = lane.ownTracks("bob/phone", Self.away.0, Self.away.1)
        #expect(exit.occupancy == [OccupancyChange(owner: "family", fence: "school", device: "bob/phone", inside: false)])
        #expect(exit.events.first?["event"] as? String == "exit")
    }

    /// A device the file moves from one group to another, both with a fence of the same
    /// identifier, has one fence of that name at a time: the one it was counted inside
    /// (the old group's) counts it no more once it leaves the fence of that name it has
    /// now. The transition itself is the new fence's, as for a fence edited in place.
    @Test func aDeviceMovedToAnotherGroupLeavesTheOldGroupsCount() throws {
        let groups = """
            { "devices": {},
              "groups": { "vans": ["v/1"], "trucks": ["t/1"] },
              "shared": [
                { "identifier": "depot", "latitude": 52.50, "longitude": 13.30, "radius": 100, "note": "vans depot", "eventType": "onEntryAndExit", "group": "vans" },
                { "identifier": "depot", "latitude": 48.10, "longitude": 11.50, "radius": 100, "note": "trucks depot", "eventType": "onEntryAndExit", "group": "trucks" } ] }
            """
        var lane = try LaneFixture(fences: groups)
        _ = lane.ownTracks("v/1", 52.50, 13.305)
        lane.now += 60
        #expect(lane.ownTracks("v/1", 52.50, 13.30).occupancy == [OccupancyChange(owner: "vans", fence: "depot", device: "v/1", inside: true)])
        try lane.edit(groups.replacingOccurrences(of: #""vans": ["v/1"], "trucks": ["t/1"]"#, with: #""vans": ["v/2"], "trucks": ["t/1", "v/1"]"#))
        lane.now += 60
        let moved = lane.ownTracks("v/1", 52.50, 13.30)
        #expect(moved.occupancy.contains(OccupancyChange(owner: "vans", fence: "depot", device: "v/1", inside: false)))
    }

    /// A device whose record a command made (`resetBadge` before any position) is
    /// announced by its first position as any new device is: badge, and the presence of
    /// its fences.
    @Test func theFirstFixAfterABadgeResetIsAnnouncedAsAFirstFix() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.command("bob/phone", #"{"action":"resetBadge"}"#)
        let first = lane.ownTracks("bob/phone", Self.away.0, Self.away.1)
        #expect(first.outboxText("geotify/presence/bob/phone/school") == "outside")
        #expect(first.outboxText("geotify/badge/bob/phone") == "0")
    }

    @Test func aBatchTakesEachDevicesFixesInTimestampOrder() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        let t = lane.now
        func position(_ point: (Double, Double), _ tst: Double) -> Inbound {
            lane.inbound(
                "alice/phone", topic: "owntracks/alice/phone",
                payload: Array(#"{"_type":"location","lat":\#(point.0),"lon":\#(point.1),"acc":5,"tst":\#(Int(tst))}"#.utf8),
                route: .location(.ownTracks))
        }
        let effects = lane.handle([position(Self.away, t + 120), position(Self.home, t + 60)])
        #expect(effects.events.map { $0["event"] as? String } == ["enter", "exit"], "the later fix (away) comes last though it arrived first")
        #expect(effects.counters[.fixesDropped(.outOfOrder)] == 0)
    }

    /// A device the lane does not keep yet takes its positions of one batch in timestamp
    /// order too (the lane marks the devices it keeps as it decodes a batch, and
    /// remembers the new ones apart).
    @Test func aNewDevicesFixesOfOneBatchAreTakenInTimestampOrder() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let t = lane.now
        let effects = lane.handle([
            lane.ownTracksPosition("alice/phone", Self.home.0, Self.home.1, tst: t + 60),
            lane.ownTracksPosition("alice/phone", Self.away.0, Self.away.1, tst: t),
        ])
        #expect(effects.counters[.fixesDropped(.outOfOrder)] == 0)
        #expect(effects.events.map { $0["event"] as? String } == ["enter"], "away first (establishing), then home")
    }

    /// A batch evaluates its positions with the lines of the next ones asked for ahead
    /// (`EvaluationLookahead`): a hint, so twelve devices walking in and out of their
    /// homes, their positions interleaved in one batch a round, end with the same states
    /// and notifications as the same positions one batch each (in the first round the
    /// devices are not kept yet, so there is nothing to ask for).
    @Test func aBatchDecidesAsItsPositionsOneByOne() throws {
        let devices = (0..<12).map { "d\($0)/phone" }
        let entries = devices.enumerated().map { number, device in
            #""\#(device)": [ { "identifier": "home", "latitude": \#(50 + Double(number) / 10), "longitude": 10, "radius": 100, "note": "Home", "eventType": "onEntryAndExit" } ]"#
        }
        let fences = #"{ "devices": { \#(entries.joined(separator: ", ")) } }"#
        var batched = try LaneFixture(fences: fences)
        var single = try LaneFixture(fences: fences)
        var batchedEvents: [String] = []
        var singleEvents: [String] = []
        for round in 0..<8 {
            let positions = devices.enumerated().map { number, device in
                // In at even rounds for even devices, odd rounds for odd ones.
                let inside = (round + number) % 2 == 0
                return batched.ownTracksPosition(device, 50 + Double(number) / 10 + (inside ? 0 : 0.01), 10, tst: batched.now + Double(round))
            }
            batchedEvents += batched.handle(positions).events.compactMap { $0["event"] as? String }
            for position in positions {
                singleEvents += single.handle([position]).events.compactMap { $0["event"] as? String }
            }
        }
        #expect(batchedEvents.count > 12, "the devices entered and left")
        #expect(batchedEvents == singleEvents)
        for device in devices {
            #expect(batched.core.state(of: device) == single.core.state(of: device))
        }
    }

    /// A device forgotten within a batch to make room gives its slot to the new device; a
    /// position of its own later in the same batch is still its own, not the new one's.
    @Test func aSlotFreedWithinABatchIsNotTakenForTheDeviceThatHadIt() throws {
        var lane = try Self.fullLaneOfTwo(idleFor: 4_000)
        let effects = lane.handle([lane.ownTracksPosition("c/1", 3, 3), lane.ownTracksPosition("a/1", 2, 2)])
        #expect(effects.forgotten == ["a/1", "b/1"], "a/1 made room for c/1, then b/1 for a/1 again")
        #expect(lane.core.state(of: "c/1")?.lastFix?.coordinate == Coordinate(latitude: 3, longitude: 3))
        #expect(lane.core.state(of: "a/1")?.lastFix?.coordinate == Coordinate(latitude: 2, longitude: 2))
        #expect(lane.core.deviceCount == 2)
    }

    /// A fence moved in the fence file counts where it now is from the device's next fix
    /// on, with no tick in between: the fences a lane keeps for a device are those of the
    /// book in force.
    @Test func aFenceMovedInTheFileCountsFromTheNextFix() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        #expect(lane.core.state(of: "alice/phone")?.isInside("home") == false)
        lane.now += 60
        let moved = Self.fences.replacingOccurrences(
            of: #""latitude": 52.52, "longitude": 13.405"#, with: #""latitude": \#(Self.away.0), "longitude": \#(Self.away.1)"#)
        #expect(moved != Self.fences)
        try lane.edit(moved)
        _ = lane.ownTracks("alice/phone", Self.away.0, Self.away.1)
        #expect(lane.core.state(of: "alice/phone")?.isInside("home") == true)
    }

    @Test func aDroppedFirstFixLeavesNoState() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let effects = lane.ownTracks("carol/phone", 1, 1, tst: lane.now - 3 * 86_400)
        #expect(effects.counters[.fixesDropped(.tooOld)] == 1)
        #expect(effects.outbox.isEmpty && effects.saves.isEmpty)
        #expect(lane.core.deviceCount == 0)
        #expect(lane.core.admission.admitted == 0, "it took no place")
    }

    /// A new device's first fix that is dropped (too old, from the future) makes no idle
    /// device go to make room for it.
    @Test func aDroppedFirstFixMakesNoIdleDeviceGo() throws {
        var lane = try Self.fullLaneOfTwo(idleFor: 4_000)
        let old = lane.ownTracks("c/1", 1, 1, tst: lane.now - 3 * 86_400)
        #expect(old.counters[.fixesDropped(.tooOld)] == 1)
        #expect(old.forgotten.isEmpty)
        let future = lane.ownTracks("c/1", 1, 1, tst: lane.now + 3_600)
        #expect(future.counters[.fixesDropped(.future)] == 1)
        #expect(future.forgotten.isEmpty)
        #expect(lane.core.deviceCount == 2)
        #expect(lane.ownTracks("c/1", 1, 1).forgotten == ["a/1"], "a fix it takes does")
    }

    @Test func badInputIsRefusedWithItsCode() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let effects = lane.handle([lane.inbound("alice/phone", topic: "owntracks/alice/phone", payload: Array("{".utf8), route: .location(.ownTracks))])
        #expect(effects.counters[.errors(.invalidJSON)] == 1)
        let error = try #require(effects.direct.first)
        #expect(error.topic == "geotify/error")
        #expect(String(decoding: error.payload, as: UTF8.self).contains(#""error":"invalid_json""#))
        #expect(effects.log.contains { $0.level == .warning && $0.message.contains("owntracks/alice/phone") })
    }

    @Test func strictDevicesRefusesDevicesWithoutFences() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.strictDevices = true }
        let effects = lane.ownTracks("mallory/phone", 1, 1)
        #expect(effects.counters[.errors(.unknownDevice)] == 1)
        #expect(lane.core.deviceCount == 0)
    }

    @Test func aDeviceThatDiffersOnlyInCaseIsPointedOutOnce() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let first = lane.ownTracks("Alice/Phone", 1, 1)
        #expect(first.counters[.errors(.unknownDevice)] == 1)
        #expect(first.log.contains { $0.message.contains(#"names "alice/phone", which differs only in letter case"#) })
        lane.now += 30
        #expect(lane.ownTracks("Alice/Phone", 1, 1.001).log.isEmpty, "said once")
    }

    @Test func encryptedPositionsWithoutAKeyAreSaidOncePerDeviceAndCountedEveryTime() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let envelope = Array(#"{"_type":"encrypted","data":"AAAA"}"#.utf8)
        func encrypted(_ device: String) -> LaneEffects {
            lane.now += 30
            return lane.handle([lane.inbound(device, topic: "owntracks/\(device)", payload: envelope, route: .location(.ownTracks))])
        }
        let first = encrypted("alice/phone")
        #expect(first.counters[.errors(.noDecryptionKey)] == 1)
        #expect(first.log.contains { $0.level == .warning && $0.message.contains(#"no secret for the device "alice/phone""#) })
        let error = try #require(first.direct.first { $0.topic == "geotify/error" })
        #expect(String(decoding: error.payload, as: UTF8.self).contains(#""error":"no_decryption_key""#))
        let again = encrypted("alice/phone")
        #expect(again.counters[.errors(.noDecryptionKey)] == 1, "counted every time")
        #expect(again.log.isEmpty && again.direct.isEmpty, "said once for the device")
        let other = encrypted("bob/phone")
        #expect(other.direct.contains { $0.topic == "geotify/error" } && !other.log.isEmpty, "another device is said once too")
        #expect(lane.core.deviceCount == 0, "nothing was evaluated")
    }

    @Test func oneOwnerCannotTakeEveryPlace() throws {
        var lane = try LaneFixture(fences: Self.fences) {
            $0.maximumDevices = 4
            $0.maximumDevicesPerOwner = 2
        }
        #expect(lane.ownTracks("mallory/a", 1, 1).counters[.fixesEvaluated] == 1)
        #expect(lane.ownTracks("mallory/b", 1, 1).counters[.fixesEvaluated] == 1)
        let refused = lane.ownTracks("mallory/c", 1, 1)
        #expect(refused.counters[.errors(.tooManyDevices)] == 1)
        #expect(refused.log.contains { $0.message.contains(#"the owner "mallory" already has 2 devices"#) })
        #expect(lane.ownTracks("mallory/d", 1, 1).log.isEmpty, "reported once for this owner, counted every time")
        #expect(lane.ownTracks("carol/a", 1, 1).counters[.fixesEvaluated] == 1, "other owners still get in")
        #expect(lane.ownTracks("alice/phone", 1, 1).counters[.fixesEvaluated] == 1, "devices in the fence file are always admitted")
    }

    /// The owner is the first level as MQTT reads it: a combining mark after the slash
    /// (`mallory/\u{301}1`, whose characters hold no lone '/') makes no new owner.
    /// (Found by `LaneCoreHostileInputTests`.)
    @Test func aCombiningMarkAfterTheSlashMakesNoNewOwner() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.maximumDevicesPerOwner = 2 }
        #expect(DeviceAdmission.owner(of: "mallory/\u{301}1") == "mallory")
        #expect(lane.ownTracks("mallory/\u{301}1", 1, 1).counters[.fixesEvaluated] == 1)
        #expect(lane.ownTracks("mallory/\u{301}2", 1, 1).counters[.fixesEvaluated] == 1)
        #expect(lane.ownTracks("mallory/\u{301}3", 1, 1).counters[.errors(.tooManyDevices)] == 1)
        #expect(lane.ownTracks("mallory/a", 1, 1).counters[.errors(.tooManyDevices)] == 1)
    }

    /// A full lane of two (`fullLane(maximumDevices: 2)`): `a/1`, then ten seconds later
    /// `b/1`, with the clock `idle` seconds after `b/1`'s position.
    static func fullLaneOfTwo(idleFor idle: Double) throws -> LaneFixture {
        var lane = try fullLane(maximumDevices: 2)
        _ = lane.ownTracks("a/1", 1, 1)
        lane.now += 10
        _ = lane.ownTracks("b/1", 1, 1)
        lane.now += idle
        return lane
    }

    /// A lane of a bridge that keeps at most `maximumDevices` devices without fences and
    /// forgets one that sent nothing for an hour to make room for a new one.
    static func fullLane(maximumDevices: Int) throws -> LaneFixture {
        try LaneFixture(fences: Self.fences) {
            $0.maximumDevices = maximumDevices
            $0.deviceEvictionAge = 3_600
        }
    }

    @Test func whenFullAnIdleDeviceWithoutFencesMakesRoom() throws {
        var lane = try Self.fullLane(maximumDevices: 2)
        _ = lane.ownTracks("a/1", 1, 1)
        _ = lane.ownTracks("b/1", 1, 1)
        lane.now += 60
        #expect(lane.ownTracks("c/1", 1, 1).counters[.errors(.tooManyDevices)] == 1, "nobody idle long enough")
        lane.now += 3_600
        _ = lane.ownTracks("b/1", 1, 1.001)
        let admitted = lane.ownTracks("c/1", 1, 1)
        #expect(admitted.counters[.fixesEvaluated] == 1)
        #expect(admitted.forgotten == ["a/1"], "the least recently seen goes, and its saved state with it")
        #expect(lane.core.state(of: "a/1") == nil)
    }

    /// Of devices last seen at the same moment (one burst), the first by identifier goes
    /// first, whatever order the lane's table keeps them in: which device is forgotten
    /// follows from the inputs alone. Ten evictions from thirty, one after another.
    @Test func ofDevicesIdleAlikeTheFirstByIdentifierMakesRoom() throws {
        var lane = try Self.fullLane(maximumDevices: 30)
        let idle = (0..<30).map { "u\($0)/p" }
        _ = lane.handle(idle.map { lane.ownTracksPosition($0, 1, 1) })
        lane.now += 3_600
        var left = idle.sorted()
        for newcomer in 0..<10 {
            let admitted = lane.ownTracks("new\(newcomer)/p", 1, 1)
            #expect(admitted.forgotten == [left.removeFirst()], "newcomer \(newcomer)")
        }
    }

    /// A full bridge refuses a device that keeps sending without looking through the
    /// lane's devices each time: nobody can be idle before the oldest is. It looks again
    /// once that time comes, and when the fence file changes.
    @Test func aRefusedDeviceDoesNotMakeTheLaneLookForIdleDevicesAgainAndAgain() throws {
        var lane = try Self.fullLaneOfTwo(idleFor: 60)
        for _ in 0..<5 {
            // Two at one instant, as a burst's messages arrive, each second.
            #expect(lane.ownTracks("mallory/x", 1, 1).counters[.errors(.tooManyDevices)] == 1)
            #expect(lane.ownTracks("mallory/y", 1, 1).counters[.errors(.tooManyDevices)] == 1)
            lane.now += 1
        }
        #expect(lane.core.idleDeviceSearches == 1)
        // a/1 is idle for 3 600 s at 1 700 003 600: not a second before.
        lane.now = 1_700_003_599
        #expect(lane.ownTracks("mallory/x", 1, 1).counters[.errors(.tooManyDevices)] == 1)
        #expect(lane.core.idleDeviceSearches == 1)
        lane.now = 1_700_003_600
        let admitted = lane.ownTracks("mallory/x", 1, 1)
        #expect(admitted.forgotten == ["a/1"])
        #expect(lane.core.idleDeviceSearches == 2)
    }

    /// A bridge full of devices without fences that another lane keeps, with
    /// `deviceEvictionAge` 0 (any device may go at once): this lane has none to evict, so
    /// it refuses the new device at once (every time), rather than looking again and
    /// again for one.
    @Test func aLaneWithNoDeviceToEvictRefusesANewDeviceAtOnce() throws {
        // The place is taken in another lane: the admission is the bridge's, shared.
        var lane = try LaneFixture(fences: Self.fences, settings: {
            $0.maximumDevices = 1
            $0.deviceEvictionAge = 0
        }, admittedElsewhere: ["other/1"])
        for _ in 0..<2 {
            let refused = lane.ownTracks("mallory/x", 1, 1)
            #expect(refused.counters[.errors(.tooManyDevices)] == 1)
            #expect(refused.saves.isEmpty && lane.core.deviceCount == 0)
        }
        #expect(lane.core.idleDeviceSearches == 2, "with no wait before a device is idle, each refusal looks, once")
    }

    /// A device the file stops naming is forgotten with its state
    /// (`LaneCoreRemovedDevicesTests`), so it takes no admission place: a new device is
    /// admitted beside the unnamed ones, nobody evicted. (It used to take a place past
    /// the limit, and the new device was refused while nobody was idle.)
    @Test func aDeviceTheFenceFileNoLongerNamesTakesNoPlace() throws {
        var lane = try Self.fullLane(maximumDevices: 2)
        _ = lane.ownTracks("bob/phone", 1, 1)
        _ = lane.ownTracks("a/1", 1, 1)
        try lane.edit(Self.fences.replacingOccurrences(of: "bob/phone", with: "carol/phone"))
        let admitted = lane.ownTracks("d/1", 1, 1)
        #expect(admitted.counters[.fixesEvaluated] == 1)
        #expect(admitted.forgotten == ["bob/phone"], "forgotten as the file stopped naming it; nobody evicted")
        #expect(lane.core.admission.admitted == 2, "a/1 and d/1")
    }

    /// A device without fences that the file comes to name (an `add` command, an edit)
    /// gives its admission place back: the places count the devices kept that the file
    /// does not name.
    @Test func aDeviceTheFenceFileComesToNameGivesItsPlaceBack() throws {
        var lane = try Self.fullLane(maximumDevices: 1)
        _ = lane.ownTracks("dave/phone", 1, 1)
        #expect(lane.ownTracks("erin/phone", 1, 1).counters[.errors(.tooManyDevices)] == 1)
        try lane.edit(Self.fences.replacingOccurrences(of: "bob/phone", with: "dave/phone"))
        #expect(lane.advance(0.2).log.isEmpty)
        #expect(lane.core.admission.admitted == 0)
        #expect(lane.ownTracks("erin/phone", 1, 1).counters[.fixesEvaluated] == 1, "dave/phone's place is free")
    }

    /// An idle device evicted to make room leaves the shared fences it was inside (the
    /// occupancy counts it no more) and its retained topics are removed: the bridge no
    /// longer knows where it is.
    @Test func anEvictedDeviceLeavesTheOccupancyAndItsRetainedTopics() throws {
        let office = """
            { "devices": {},
              "shared": [
                { "identifier": "office", "latitude": 52.50, "longitude": 13.30, "radius": 100, "note": "", "eventType": "onEntryAndExit" } ] }
            """
        var lane = try LaneFixture(fences: office) {
            $0.maximumDevices = 1
            $0.deviceEvictionAge = 3_600
        }
        _ = lane.ownTracks("u/a", 52.50, 13.305)
        lane.now += 60
        let entered = lane.ownTracks("u/a", 52.50, 13.30)
        #expect(entered.occupancy == [OccupancyChange(owner: SharedFences.everyDevice, fence: "office", device: "u/a", inside: true)])
        lane.now += 3_600
        let evicting = lane.ownTracks("u/b", 52.50, 13.30)
        #expect(evicting.forgotten == ["u/a"])
        #expect(evicting.occupancy.first == OccupancyChange(owner: SharedFences.everyDevice, fence: "office", device: "u/a", inside: false))
        let removed = evicting.outbox.filter { $0.topic.contains("/u/a") }
        #expect(removed.map(\.topic) == [
            "geotify/state/u/a", "geotify/tracker/u/a", "geotify/presence/u/a/office", "geotify/badge/u/a",
        ])
        #expect(removed.allSatisfy { $0.payload.isEmpty && $0.retain && $0.qos == 1 })
    }

    /// Of devices seen at the same time (every message of a burst arrives at once), the
    /// first by identifier makes room, whatever the order of the lane's table: the lane's
    /// decisions follow from its inputs alone. (Found by `LaneCoreHostileInputTests`.)
    @Test func ofDevicesSeenAtTheSameTimeTheFirstByIdentifierMakesRoom() throws {
        let devices = ["f/1", "a/1", "e/1", "c/1", "b/1", "d/1"]
        // Lanes kept side by side, each fed the devices in another order in one burst:
        // each table has a hash seed, and so an order, of its own.
        var lanes: [LaneFixture] = []
        for turn in 0..<16 {
            var lane = try Self.fullLane(maximumDevices: devices.count)
            let order = devices.indices.map { devices[($0 * 5 + turn) % devices.count] }
            _ = lane.handle(order.map { lane.ownTracksPosition($0, 1, 1) })
            lanes.append(lane)
        }
        for index in lanes.indices {
            lanes[index].now += 4_000
            #expect(lanes[index].ownTracks("x/1", 1, 1).forgotten == ["a/1"])
            #expect(lanes[index].ownTracks("y/1", 1, 1).forgotten == ["b/1"])
        }
    }

    /// Of several devices idle long enough, the one seen longest ago makes room.
    @Test func theDeviceSeenLongestAgoMakesRoom() throws {
        var lane = try Self.fullLaneOfTwo(idleFor: 4_000)
        let admitted = lane.ownTracks("c/1", 1, 1)
        #expect(admitted.counters[.fixesEvaluated] == 1)
        #expect(admitted.forgotten == ["a/1"], "a/1 was seen 10 s before b/1")
        #expect(lane.core.state(of: "a/1") == nil)
        #expect(lane.core.state(of: "b/1") != nil)
    }

    /// The unnamed devices kept from before a restart hold their places at once: their
    /// owner's and the bridge's; releasing one gives its place back.
    @Test func devicesKeptFromBeforeARestartHoldTheirPlaces() {
        let admission = DeviceAdmission(maximum: 3, perOwner: 2, devices: ["mallory/a", "mallory/b", "carol/a"])
        #expect(admission.admitted == 3)
        #expect(admission.admit("mallory/c") == .ownerFull)
        #expect(admission.admit("dave/a") == .full)
        admission.release("carol/a")
        #expect(admission.admit("dave/a") == .admitted)
        #expect(admission.admitted == 3)
    }

    /// An owner whose last unnamed device is released is forgotten, so owners made up
    /// one after another, each admitted and dropped again, cost no memory that stays.
    @Test func anOwnerWhoseLastDeviceIsReleasedIsForgotten() {
        let admission = DeviceAdmission(maximum: 8, perOwner: 2)
        for owner in 0..<1_000 {
            #expect(admission.admit("made-up\(owner)/a") == .admitted)
            #expect(admission.admit("made-up\(owner)/b") == .admitted)
            admission.release("made-up\(owner)/a")
            #expect(admission.ownersCounted == 1, "one device left")
            admission.release("made-up\(owner)/b")
        }
        #expect(admission.admitted == 0)
        #expect(admission.ownersCounted == 0)
    }
}
