import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyStore

/// What a lane does with a device the fence file stops naming, while the bridge runs or
/// while it is stopped, through the pure core: it forgets it (`LaneCore.forget`), so its
/// last values are not published again after a connection; a device the file never named
/// keeps its state.
@Suite("Lane core: removed devices")
struct LaneCoreRemovedDevicesTests {
    /// Alice and Bob with a home fence each, in a group with a shared fence, and a shared
    /// fence of every device.
    static let fences = """
        { "devices": {
            "alice/phone": [ { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntryAndExit" } ],
            "bob/phone": [ { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntryAndExit" } ] },
          "groups": { "family": ["alice/phone", "bob/phone"] },
          "shared": [
            { "identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150, "eventType": "onEntryAndExit", "group": "family" },
            { "identifier": "mall", "latitude": 52.50, "longitude": 13.30, "radius": 100, "eventType": "onEntryAndExit" } ] }
        """
    /// The same file without Alice.
    static let withoutAlice = fences
        .replacingOccurrences(of: #""alice/phone": [ { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntryAndExit" } ],"#, with: "")
        .replacingOccurrences(of: #"["alice/phone", "bob/phone"]"#, with: #"["bob/phone"]"#)

    static let home = (52.52, 13.405)
    static let school = (52.53, 13.38)
    static let mall = (52.50, 13.30)

    /// Those of `messages` on Alice's topics.
    static func alices(_ messages: [OutboxMessage]) -> [OutboxMessage] {
        messages.filter { $0.topic.hasSuffix("/alice/phone") || $0.topic.contains("/alice/phone/") }
    }

    /// The bug: Alice's state was kept when the file stopped naming her, and every
    /// connection published her last values again, retained, after the announcer had
    /// emptied them. Now the lane forgets her when the change comes into force: her
    /// saved state is deleted in the commit that empties her topics, and a connection
    /// republishes Bob alone.
    @Test func aDeviceRemovedFromTheFileIsForgottenAndNotRepublishedAfterAConnection() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", Self.home.0, Self.home.1)
        _ = lane.ownTracks("bob/phone", Self.home.0, Self.home.1)
        try lane.edit(Self.withoutAlice)
        let removed = lane.advance(0.2)
        #expect(removed.forgotten == ["alice/phone"])
        #expect(removed.saves["alice/phone"] == nil)
        #expect(lane.core.state(of: "alice/phone") == nil)
        #expect(removed.events.isEmpty, "no notification: she did not move")
        let emptied = Self.alices(removed.outbox)
        #expect(emptied.map(\.topic) == [
            "geotify/state/alice/phone", "geotify/tracker/alice/phone", "geotify/presence/alice/phone/home",
            "geotify/presence/alice/phone/mall", "geotify/presence/alice/phone/school", "geotify/badge/alice/phone",
        ])
        #expect(emptied.allSatisfy { $0.payload.isEmpty && $0.retain && $0.qos == 1 }, "in the outbox, committed with the deletion")
        #expect(lane.core.deviceCount == 1)

        lane.core.republishAll()
        let republished = lane.advance(0.2).direct
        #expect(Self.alices(republished).isEmpty, "nothing of Alice again: \(Self.alices(republished).map(\.topic))")
        #expect(republished.contains { $0.topic == "geotify/state/bob/phone" })
        #expect(Self.alices(lane.advance(0.2).outbox).isEmpty, "forgotten once")
    }

    /// With Home Assistant on, a removed device's lane deletes its entities (empty
    /// configs) before it empties their topics, while the bridge runs and at a start:
    /// an empty state document reaching a tracker Home Assistant still has made it log a
    /// JSON warning and two template errors (seen with a real Home Assistant, when the
    /// lane's messages came before the announcer's or the sweep's configs). A device the
    /// file never named (evicted when idle, or forgotten at a start under
    /// `strictDevices`) has no entities: no configs.
    @Test func withHomeAssistantOnARemovedDevicesEntitiesGoBeforeItsTopicsEmpty() throws {
        let discovery = HomeAssistantDiscovery(topics: Topics(prefix: "geotify"))
        let node = discovery.nodeID(of: "alice/phone")
        let configs = [
            "homeassistant/binary_sensor/\(node)/presence_home/config", "homeassistant/binary_sensor/\(node)/presence_mall/config",
            "homeassistant/binary_sensor/\(node)/presence_school/config", "homeassistant/button/\(node)/reset_badge/config",
            "homeassistant/device_tracker/\(node)/tracker/config", "homeassistant/event/\(node)/event/config",
            "homeassistant/sensor/\(node)/badge/config",
        ]
        /// Alice's messages in `outbox`: exactly `configs` first, empty, then her topics.
        func check(_ outbox: [OutboxMessage], _ configs: [String], _ when: Comment) {
            let alices = outbox.filter { $0.topic.contains("alice_phone") || $0.topic.contains("alice/phone") }
            #expect(Array(alices.map(\.topic).prefix(configs.count)) == configs, when)
            #expect(alices.prefix(configs.count).allSatisfy { $0.payload.isEmpty && $0.retain && $0.qos == 1 }, when)
            #expect(alices.dropFirst(configs.count).contains { $0.topic == "geotify/state/alice/phone" }, when)
            #expect(!alices.dropFirst(configs.count).contains { $0.topic.hasPrefix("homeassistant/") }, when)
        }
        var running = try LaneFixture(fences: Self.fences) { $0.homeAssistantEnabled = true }
        _ = running.ownTracks("alice/phone", Self.home.0, Self.home.1)
        try running.edit(Self.withoutAlice)
        let removed = running.advance(0.2)
        #expect(removed.forgotten == ["alice/phone"])
        check(removed.outbox, configs, "while running")

        var started = try LaneFixture(
            fences: Self.withoutAlice, settings: { $0.homeAssistantEnabled = true }, states: try Self.statesLeftAtAStop(),
            named: ["alice/phone", "bob/phone"])
        let start = started.advance(0.2)
        #expect(start.forgotten == ["alice/phone"])
        // At a start the lane knows the fences her state names (she was in the mall); the
        // sweep deletes the configs of the others it finds.
        check(start.outbox, configs.filter { !$0.contains("presence_home") && !$0.contains("presence_school") }, "at a start")

        // Under `strictDevices` a start forgets `u/1` too, which the file never named:
        // it never had entities either.
        var strict = try LaneFixture(
            fences: Self.withoutAlice, settings: { $0.homeAssistantEnabled = true; $0.strictDevices = true },
            states: try Self.statesLeftAtAStop(), named: ["alice/phone", "bob/phone"])
        let strictStart = strict.advance(0.2)
        #expect(strictStart.forgotten == ["alice/phone", "u/1"])
        check(strictStart.outbox, configs.filter { !$0.contains("presence_home") && !$0.contains("presence_school") }, "strict start")
        let unnamedConfigs = strictStart.outbox.filter { $0.topic.hasPrefix("homeassistant/") && $0.topic.contains(discovery.nodeID(of: "u/1")) }
        #expect(unnamedConfigs.isEmpty, "no entities to delete for u/1")
        #expect(strictStart.outbox.contains { $0.topic == "geotify/state/u/1" && $0.payload.isEmpty })

        var lax = try LaneFixture(fences: Self.fences) { $0.homeAssistantEnabled = true; $0.maximumDevices = 1; $0.deviceEvictionAge = 60 }
        _ = lax.ownTracks("u/1", Self.home.0, Self.home.1)
        lax.now += 3_600
        let evicted = lax.ownTracks("u/2", Self.home.0, Self.home.1)
        #expect(evicted.forgotten == ["u/1"])
        #expect(!evicted.outbox.contains { $0.topic.hasPrefix("homeassistant/") }, "no entities to delete")
    }

    /// A removed device inside a shared fence leaves its count, as a device evicted does
    /// (without an exit notification), also of a fence of every device, which a device
    /// the file does not name has too; one inside a fence removed with it empties that
    /// fence's count when it was the last one in (`fenceRemoved`). Bob, still named, is
    /// counted as before.
    @Test func aRemovedDeviceLeavesTheCountsItWasIn() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let entered = lane.ownTracks("alice/phone", Self.mall.0, Self.mall.1)
        #expect(entered.occupancy == [OccupancyChange(owner: SharedFences.everyDevice, fence: "mall", device: "alice/phone", inside: true)])
        _ = lane.ownTracks("bob/phone", Self.mall.0, Self.mall.1)
        try lane.edit(Self.withoutAlice)
        let removed = lane.advance(0.2)
        #expect(removed.occupancy == [OccupancyChange(owner: SharedFences.everyDevice, fence: "mall", device: "alice/phone", inside: false)])
        #expect(removed.events.isEmpty)

        var again = try LaneFixture(fences: Self.fences)
        _ = again.ownTracks("alice/phone", Self.school.0, Self.school.1)
        let noSchool = Self.withoutAlice.replacingOccurrences(
            of: #"{ "identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150, "eventType": "onEntryAndExit", "group": "family" },"#,
            with: "")
        try again.edit(noSchool)
        #expect(again.advance(0.2).occupancy == [
            OccupancyChange(owner: "family", fence: "school", device: "alice/phone", inside: false, fenceRemoved: true),
        ])
    }

    /// A device the file never named (without `strictDevices` it may send positions)
    /// keeps its state across a change of the file and is republished after a
    /// connection, as before.
    @Test func aDeviceTheFileNeverNamedKeepsItsState() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("u/1", Self.home.0, Self.home.1)
        try lane.edit(Self.withoutAlice)
        #expect(lane.advance(0.2).forgotten.isEmpty)
        #expect(lane.core.state(of: "u/1") != nil)
        lane.core.republishAll()
        #expect(lane.advance(0.2).direct.contains { $0.topic == "geotify/state/u/1" })
    }

    /// A position of a removed device, in the batch that forgets it: it is a new device
    /// the file does not name, with a new state (badge 0) saved after the deletion and
    /// an admission place; its new values follow the emptied ones. Under
    /// `strictDevices` it is refused, as any device the file does not name.
    @Test func aRemovedDeviceThatSendsAgainIsANewDevice() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", Self.home.0 - 0.02, Self.home.1)
        lane.now += 60
        #expect(lane.ownTracks("alice/phone", Self.home.0, Self.home.1).events.count == 1, "entered: badge 1")
        try lane.edit(Self.withoutAlice)
        lane.now += 60
        let back = lane.ownTracks("alice/phone", Self.home.0, Self.home.1)
        #expect(back.forgotten == ["alice/phone"])
        #expect(back.saves["alice/phone"]?.badge == 0, "a new state, decided after the forgetting")
        #expect(back.saves["alice/phone"]?.fences.contains { $0.fence == "home" } == false)
        #expect(back.outboxText("geotify/badge/alice/phone") == "0")
        #expect(back.outboxText("geotify/presence/alice/phone/mall") == "outside", "the shared fence of every device, from its first fix")
        let firstNew = try #require(back.outbox.firstIndex { $0.topic.contains("alice/phone") && !$0.payload.isEmpty })
        #expect(back.outbox[..<firstNew].contains { $0.topic == "geotify/state/alice/phone" && $0.payload.isEmpty }, "emptied first")
        #expect(lane.core.admission.admitted == 1)

        var strict = try LaneFixture(fences: Self.fences) { $0.strictDevices = true }
        _ = strict.ownTracks("alice/phone", Self.home.0, Self.home.1)
        try strict.edit(Self.withoutAlice)
        let refused = strict.ownTracks("alice/phone", Self.home.0, Self.home.1)
        #expect(refused.forgotten == ["alice/phone"])
        #expect(refused.counters[.errors(.unknownDevice)] == 1)
        #expect(strict.core.state(of: "alice/phone") == nil)
    }

    /// After a start the lane has no earlier book of its own: a device the book it was
    /// made with names, removed before the lane's first look, is forgotten; one whose
    /// state was loaded though that book did not name it (a device without fences) is
    /// not.
    @Test func aDeviceRemovedBeforeTheLanesFirstLookAfterAStartIsForgotten() throws {
        var before = try LaneFixture(fences: Self.fences)
        _ = before.ownTracks("alice/phone", Self.home.0, Self.home.1)
        _ = before.ownTracks("u/1", Self.home.0, Self.home.1)
        let states = try ["alice/phone", "u/1"].reduce(into: [String: DeviceState]()) { states, device in
            let state: DeviceState = try #require(before.core.state(of: device))
            states[device] = state
        }
        var lane = try LaneFixture(fences: Self.fences, states: states)
        try lane.edit(Self.withoutAlice)
        let removed = lane.advance(0.2)
        #expect(removed.forgotten == ["alice/phone"])
        #expect(removed.outboxText("geotify/presence/alice/phone/home") == "")
        #expect(lane.core.state(of: "u/1") != nil)
    }

    /// The states a stopped bridge left of Alice inside the mall (the shared fence of
    /// every device), Bob at home and `u/1`, a device the file does not name, at home.
    static func statesLeftAtAStop() throws -> [String: DeviceState] {
        var before = try LaneFixture(fences: Self.fences)
        _ = before.ownTracks("alice/phone", Self.mall.0, Self.mall.1)
        _ = before.ownTracks("bob/phone", Self.home.0, Self.home.1)
        _ = before.ownTracks("u/1", Self.home.0, Self.home.1)
        #expect(before.core.savesAsNamed("alice/phone") && !before.core.savesAsNamed("u/1"))
        return try ["alice/phone", "bob/phone", "u/1"].reduce(into: [String: DeviceState]()) { states, device in
            let state: DeviceState = try #require(before.core.state(of: device))
            states[device] = state
        }
    }

    /// The bug: a device removed from the file while the bridge was stopped was loaded
    /// at the next start as one the file never named, so every connection published its
    /// last values again and the start's sweep kept its topics. Its state now says the
    /// file named it when it was saved, so the lane's first look forgets it as it would
    /// a removal while running: its topics emptied in the commit that deletes its state,
    /// its counts left, one line logged, nothing of it after a connection. `u/1`, never
    /// named, keeps its state.
    @Test func aDeviceRemovedWhileTheBridgeWasStoppedIsForgottenAtTheStart() throws {
        var lane = try LaneFixture(fences: Self.withoutAlice, states: try Self.statesLeftAtAStop(), named: ["alice/phone", "bob/phone"])
        #expect(lane.core.admission.admitted == 2, "loaded without fences: Alice and u/1")
        let start = lane.advance(0.2)
        #expect(start.forgotten == ["alice/phone"])
        #expect(start.saves["alice/phone"] == nil)
        #expect(lane.core.state(of: "alice/phone") == nil)
        #expect(start.events.isEmpty, "no notification: she did not move")
        #expect(start.occupancy == [OccupancyChange(owner: SharedFences.everyDevice, fence: "mall", device: "alice/phone", inside: false)])
        let emptied = Self.alices(start.outbox)
        #expect(Set(emptied.map(\.topic)).isSuperset(of: [
            "geotify/state/alice/phone", "geotify/tracker/alice/phone", "geotify/badge/alice/phone", "geotify/presence/alice/phone/mall",
        ]))
        #expect(emptied.allSatisfy { $0.payload.isEmpty && $0.retain && $0.qos == 1 }, "in the outbox, committed with the deletion")
        #expect(start.log.map(\.message).filter { $0.hasPrefix("forgot") } == [
            "forgot 1 device the fence file does not name (alice/phone): their state and retained topics",
        ])
        #expect(lane.core.admission.admitted == 1, "u/1 alone")
        #expect(lane.core.state(of: "u/1") != nil)

        lane.core.republishAll()
        let republished = lane.advance(0.2).direct
        #expect(Self.alices(republished).isEmpty, "nothing of Alice again: \(Self.alices(republished).map(\.topic))")
        #expect(republished.contains { $0.topic == "geotify/state/bob/phone" })
        #expect(republished.contains { $0.topic == "geotify/state/u/1" })
    }

    /// The start's sweep of retained topics clears every topic the broker still holds of
    /// a device removed while the bridge was stopped (the presence of each fence it was
    /// announced with too, of which its state keeps no entry), also when it comes before
    /// the lane's first tick: the lane has forgotten the device by then.
    @Test func theStartsSweepClearsEveryTopicOfADeviceRemovedWhileTheBridgeWasStopped() throws {
        var lane = try LaneFixture(fences: Self.withoutAlice, states: try Self.statesLeftAtAStop(), named: ["alice/phone", "bob/phone"])
        let sweep = RetainedSweepTests.sweep(homeAssistant: false)
        let found = RetainedSweepTests.retained(for: try RetainedSweepTests.book(Self.fences))
            .compactMap { sweep.read(topic: $0.topic, payload: $0.payload) }
            .filter { $0.laneDevice != nil }
        let alices = Set(found.map(\.topic).filter { $0.hasSuffix("/alice/phone") || $0.contains("/alice/phone/") })
        #expect(alices.count == 6, "state, tracker, badge, home, mall, school: \(alices.sorted())")
        var effects = LaneEffects()
        lane.core.clearStale(found, sweep: sweep, book: lane.book, into: &effects)
        #expect(effects.forgotten == ["alice/phone"])
        let emptied = Set(Self.alices(effects.outbox).filter(\.payload.isEmpty).map(\.topic))
        #expect(emptied == alices)
        #expect(!effects.outbox.contains { $0.topic.contains("bob/phone") }, "Bob's are live")
    }

    /// For a device the file does not name, only the lane's state speaks: the start's
    /// sweep keeps the retained topics of `u/1`, whose state the lane kept from before
    /// the stop, and clears those of `u/2`, which it keeps no state for (evicted, or
    /// refused, before the stop), the presence of a shared fence both may enter included.
    @Test func theStartsSweepKeepsAnUnnamedDevicesTopicsOnlyWhileTheLaneKeepsItsState() throws {
        var lane = try LaneFixture(fences: Self.fences, states: try Self.statesLeftAtAStop(), named: ["alice/phone", "bob/phone"])
        let sweep = RetainedSweepTests.sweep(homeAssistant: false)
        let presence = PresenceMessages(topics: Topics())
        let topics = { (device: String) in
            [presence.stateTopic(device), presence.trackerTopic(device), Topics().badge(device), presence.presenceTopic(device, fence: "mall")]
        }
        let found = (topics("u/1") + topics("u/2")).compactMap { sweep.read(topic: $0, payload: Array("x".utf8)) }
        #expect(found.count == 8 && found.allSatisfy { $0.laneDevice != nil })
        #expect(lane.core.state(of: "u/1") != nil && lane.core.state(of: "u/2") == nil)
        var effects = LaneEffects()
        lane.core.clearStale(found, sweep: sweep, book: lane.book, into: &effects)
        #expect(effects.outbox.map(\.topic) == topics("u/2"))
        #expect(effects.outbox.allSatisfy { $0.payload.isEmpty && $0.retain && $0.qos == 1 })
        #expect(effects.counters.amounts[.sweepCleared] == 4)
    }

    /// A start's sweep that finds nothing stale on a lane leaves no trace there: no
    /// message, no count, and no "clearing 0 retained topics" in the log.
    @Test func aSweepThatFindsNothingStaleOnALaneSaysNothing() throws {
        var lane = try LaneFixture(fences: Self.fences, states: try Self.statesLeftAtAStop(), named: ["alice/phone", "bob/phone"])
        let sweep = RetainedSweepTests.sweep(homeAssistant: false)
        let found = RetainedSweepTests.retained(for: try RetainedSweepTests.book(Self.fences))
            .compactMap { sweep.read(topic: $0.topic, payload: $0.payload) }
            .filter { $0.laneDevice != nil }
        #expect(!found.isEmpty)
        var effects = LaneEffects()
        lane.core.clearStale(found, sweep: sweep, book: lane.book, into: &effects)
        #expect(effects.outbox.isEmpty)
        #expect(effects.counters.amounts[.sweepCleared] == nil)
        #expect(effects.log.isEmpty, "\(effects.log.map(\.message))")
    }

    /// A state saved before whether the file named the device was recorded (by an
    /// earlier version) counts as that of a device never named: Alice, removed while the
    /// bridge was stopped, is kept as before, and republished after a connection.
    @Test func aStateSavedWithoutTheRecordCountsAsNeverNamed() throws {
        var lane = try LaneFixture(fences: Self.withoutAlice, states: try Self.statesLeftAtAStop())
        #expect(lane.advance(0.2).forgotten.isEmpty)
        #expect(lane.core.state(of: "alice/phone") != nil)
        lane.core.republishAll()
        #expect(lane.advance(0.2).direct.contains { $0.topic == "geotify/state/alice/phone" })
    }

    /// Under `strictDevices` no device the file does not name may have state: a start
    /// forgets every one loaded, whatever its state says (`u/1`, never named, and Alice
    /// with a state saved without the record).
    @Test func underStrictDevicesAStartForgetsEveryDeviceTheFileDoesNotName() throws {
        var lane = try LaneFixture(fences: Self.withoutAlice, settings: { $0.strictDevices = true }, states: try Self.statesLeftAtAStop())
        #expect(lane.advance(0.2).forgotten == ["alice/phone", "u/1"])
        #expect(lane.core.deviceCount == 1)
        #expect(lane.core.admission.admitted == 0)
        lane.core.republishAll()
        #expect(lane.advance(0.2).direct.allSatisfy { $0.topic.contains("bob/phone") })
    }

    /// A device the file names whose state was saved as one it did not name (a state
    /// of an earlier version, or a device added to the file) is saved again at the lane's
    /// first look, so a removal while the bridge is next stopped is told; and so is a
    /// device the file comes to name while the bridge runs, with its last fix (which is
    /// then no longer waiting to be saved). Saves follow the book the lane decided with
    /// (before its first look, the record loaded).
    @Test func aDeviceTheFileComesToNameIsSavedAsNamed() throws {
        let states = try Self.statesLeftAtAStop()
        var lane = try LaneFixture(fences: Self.fences, states: states, named: ["bob/phone"])
        #expect(lane.core.savesAsNamed("bob/phone") && !lane.core.savesAsNamed("alice/phone"))
        let start = lane.advance(0.2)
        #expect(start.saves == ["alice/phone": states["alice/phone"]], "Bob's was saved so already; u/1 is not named")
        #expect(lane.core.savesAsNamed("alice/phone") && !lane.core.savesAsNamed("u/1"))
        #expect(lane.advance(0.2).saves.isEmpty, "once")

        lane.now += 30
        #expect(lane.ownTracks("u/1", Self.home.0 + 0.0001, Self.home.1).saves.isEmpty, "a fix that crosses nothing is saved later")
        try lane.edit(Self.fences.replacingOccurrences(of: #"["alice/phone", "bob/phone"]"#, with: #"["alice/phone", "bob/phone", "u/1"]"#))
        let named = lane.advance(0.2).saves["u/1"]
        #expect(named?.fences == states["u/1"]?.fences && named?.lastFix?.coordinate.latitude == Self.home.0 + 0.0001)
        #expect(lane.core.savesAsNamed("u/1"))
        var flush = LaneEffects()
        lane.core.saveFixes(into: &flush)
        #expect(flush.saves.isEmpty, "its last fix was saved with it, and is not saved again")
    }
}
