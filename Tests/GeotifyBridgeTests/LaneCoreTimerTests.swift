import Foundation
import Testing
@testable import GeotifyBridge
import GeotifyConsole
import GeotifyCore

/// The lane's timers, driven by its clock: dwell, minimum duration (also of the states
/// loaded at start), preview expiry, and the republishing after a connection. No sleeping: the fixture's clock moves when told.
@Suite("Lane core: timers")
struct LaneCoreTimerTests {
    static let fences = """
        { "devices": { "alice/phone": [
            { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
              "note": "Welcome home", "eventType": ["onEntry", "onExit", "onDwell"], "dwell": 300 },
            { "identifier": "shop", "latitude": 52.50, "longitude": 13.30, "radius": 100,
              "note": "", "eventType": "onEntryAndExit", "minimumDuration": 120 } ] } }
        """

    /// Where the dwell time of 300 s comes from: the fence's own `dwell`, or the
    /// settings' `dwell`, the default of every fence that sets none.
    enum DwellSource: CaseIterable, Sendable { case fence, settings }

    /// A dwell fires from the clock, 300 s after the entry, once a stay, whether the
    /// fence sets its dwell time or the settings do.
    @Test(arguments: DwellSource.allCases)
    func aDwellFiresFromTheClockWithoutAFix(_ source: DwellSource) throws {
        let fences = source == .fence ? Self.fences : Self.fences.replacingOccurrences(of: #", "dwell": 300"#, with: "")
        #expect(fences.contains(#""dwell""#) == (source == .fence))
        var lane = try LaneFixture(fences: fences) { if source == .settings { $0.rules.dwell = 300 } }
        _ = lane.ownTracks("alice/phone", 52.50, 13.405)
        lane.now += 60
        let entered = lane.ownTracks("alice/phone", 52.52, 13.405)
        #expect(entered.events.map { $0["event"] as? String } == ["enter"])
        let entry = lane.now
        #expect(lane.core.nextDeadline == entry + 300)
        #expect(lane.advance(299).events.isEmpty, "not yet")
        let dwelled = lane.advance(1)
        #expect(dwelled.events.map { $0["event"] as? String } == ["dwell"])
        #expect(dwelled.events.first?["tst"] as? Int == Int(entry + 300), "timed from the entry, not from the tick")
        #expect(dwelled.saves["alice/phone"]?.badge == 2)
        #expect(lane.core.nextDeadline == nil)
        #expect(lane.advance(1_000).events.isEmpty, "once a stay")
    }

    /// The lane's next deadline is the earliest of its devices' timers: two devices that
    /// entered a minute apart, the first's dwell first, then the second's.
    @Test func theLanesNextDeadlineIsItsEarliestDevicesTimer() throws {
        let fences = Self.fences.replacingOccurrences(of: #"{ "devices": { "alice/phone": ["#, with: """
            { "devices": { "bob/phone": [
                { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
                  "note": "", "eventType": "onDwell", "dwell": 300 } ],
              "alice/phone": [
            """)
        var lane = try LaneFixture(fences: fences)
        _ = lane.ownTracks("alice/phone", 52.50, 13.405)
        _ = lane.ownTracks("bob/phone", 52.50, 13.405)
        lane.now += 60
        _ = lane.ownTracks("alice/phone", 52.52, 13.405)
        let first = lane.now
        lane.now += 60
        _ = lane.ownTracks("bob/phone", 52.52, 13.405)
        #expect(lane.core.nextDeadline == first + 300)
        #expect(lane.advance(first + 300 - lane.now).events.map { $0["device"] as? String } == ["alice/phone"])
        #expect(lane.core.nextDeadline == first + 360)
    }

    /// The home fence with `dwell` (seconds; none when nil), the shop as in `fences`.
    static func fences(dwell: Int?) -> String {
        let home = dwell.map { #""eventType": ["onEntry", "onExit", "onDwell"], "dwell": \#($0)"# } ?? #""eventType": ["onEntry", "onExit"]"#
        return """
            { "devices": { "alice/phone": [
                { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
                  "note": "Welcome home", \(home) },
                { "identifier": "shop", "latitude": 52.50, "longitude": 13.30, "radius": 100,
                  "note": "", "eventType": "onEntryAndExit", "minimumDuration": 120 } ] } }
            """
    }

    /// A fence edited while a device stays inside it is timed by its new rules from the
    /// next tick, not only once the device's next fix comes.
    @Test func aDwellShortenedWhileInsideFiresAtTheNewTime() throws {
        var lane = try LaneFixture(fences: Self.fences(dwell: 300))
        _ = lane.ownTracks("alice/phone", 52.50, 13.405)
        lane.now += 60
        #expect(lane.ownTracks("alice/phone", 52.52, 13.405).events.map { $0["event"] as? String } == ["enter"])
        let entry = lane.now
        #expect(lane.advance(30).events.isEmpty)
        try lane.edit(Self.fences(dwell: 60))
        #expect(lane.advance(1).events.isEmpty, "not yet: 31 s inside")
        #expect(lane.core.nextDeadline == entry + 60)
        let dwelled = lane.advance(29)
        #expect(dwelled.events.map { $0["event"] as? String } == ["dwell"], "60 s after the entry, not 300")
        #expect(dwelled.events.first?["tst"] as? Int == Int(entry + 60))
        #expect(lane.advance(300).events.isEmpty, "once a stay")
    }

    @Test func aDwellAddedWhileInsideGetsATimer() throws {
        var lane = try LaneFixture(fences: Self.fences(dwell: nil))
        _ = lane.ownTracks("alice/phone", 52.50, 13.405)
        lane.now += 60
        _ = lane.ownTracks("alice/phone", 52.52, 13.405)
        let entry = lane.now
        #expect(lane.core.nextDeadline == nil)
        try lane.edit(Self.fences(dwell: 120))
        #expect(lane.advance(1).events.isEmpty)
        #expect(lane.core.nextDeadline == entry + 120)
        #expect(lane.advance(119).events.map { $0["event"] as? String } == ["dwell"])
    }

    @Test func aDwellRemovedWhileInsideDoesNotFire() throws {
        var lane = try LaneFixture(fences: Self.fences(dwell: 300))
        _ = lane.ownTracks("alice/phone", 52.50, 13.405)
        lane.now += 60
        _ = lane.ownTracks("alice/phone", 52.52, 13.405)
        try lane.edit(Self.fences(dwell: nil))
        #expect(lane.advance(1).events.isEmpty)
        #expect(lane.core.nextDeadline == nil)
        #expect(lane.advance(1_000).events.isEmpty)
    }

    /// A dwell is a notification, not a change of presence: the device is still inside,
    /// so no presence message (least of all `outside`) goes out with it.
    @Test func aDwellLeavesThePresenceAsItIs() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.50, 13.405)
        lane.now += 60
        #expect(lane.ownTracks("alice/phone", 52.52, 13.405).outboxText("geotify/presence/alice/phone/home") == "inside")
        let dwelled = lane.advance(300)
        #expect(dwelled.events.map { $0["event"] as? String } == ["dwell"])
        #expect(!dwelled.outboxTopics.contains { $0.hasPrefix("geotify/presence/") }, "\(dwelled.outboxTopics)")
        #expect(dwelled.outboxText("geotify/badge/alice/phone") == "2")
        #expect(dwelled.outboxText("geotify/state/alice/phone")?.contains(#""tracker":"home""#) == true)
        #expect(dwelled.outboxText("geotify/tracker/alice/phone") == nil, "still home, as the entry published it")
    }

    @Test func aMinimumDurationIsConfirmedByTheClock() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.52, 13.405)
        lane.now += 60
        let arrived = lane.ownTracks("alice/phone", 52.50, 13.30)
        #expect(arrived.events.filter { $0["fence"] as? String == "shop" }.isEmpty, "pending for 120 s")
        #expect(arrived.saves["alice/phone"]?.fences.contains { $0.fence == "shop" && $0.pending != nil } == true, "the pending change is saved: a restart needs it")
        let seen = lane.now
        #expect(lane.advance(119).events.filter { $0["fence"] as? String == "shop" }.isEmpty)
        let confirmed = lane.advance(1).events.filter { $0["fence"] as? String == "shop" }
        #expect(confirmed.map { $0["event"] as? String } == ["enter"])
        #expect(confirmed.first?["tst"] as? Int == Int(seen), "the entry carries the time of the fix that first showed it")
    }

    /// A phone that was offline sends the positions it queued, seconds apart: a tick
    /// between two of them must not confirm a change the next one undoes. Its timers run
    /// on its own clock (its last fix's time, moved on by the bridge's clock since that
    /// fix arrived), so a glitch 10 s long in its past is no transition, however the
    /// positions are spread over batches and ticks.
    @Test func queuedPositionsAreTimedByTheDevicesOwnClock() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let past = lane.now - 3_000
        _ = lane.ownTracks("alice/phone", 52.52, 13.405, tst: past)
        let glitch = lane.ownTracks("alice/phone", 52.50, 13.30, tst: past + 1_000)
        #expect(glitch.saves["alice/phone"]?.fences.contains { $0.fence == "shop" && $0.pending != nil } == true, "pending for 120 s of its time")
        #expect(lane.core.nextDeadline == lane.now + 120, "120 s after the position arrived, on the bridge's clock")
        let ticked = lane.advance(1.5)
        #expect(ticked.events.isEmpty, "1.5 s of the phone's time passed, not 2 000 s")
        lane.now += 0.1
        let back = lane.ownTracks("alice/phone", 52.52, 13.405, tst: past + 1_010)
        #expect(back.events.filter { $0["fence"] as? String == "shop" }.isEmpty)
        #expect(lane.advance(1_000).events.filter { $0["fence"] as? String == "shop" }.isEmpty, "the glitch was never a transition")
    }

    /// A timer that comes due fires only what is due on the device's clock: a queued
    /// entry's minimum duration, confirmed 60 s after the position arrived, does not fire
    /// the dwell of the fence around it, due 300 s after the entry on the phone's clock.
    @Test func aDueTimerAdvancesTheDeviceToItsOwnClockOnly() throws {
        let nested = """
            { "devices": { "alice/phone": [
                { "identifier": "gate", "latitude": 52.52, "longitude": 13.405, "radius": 50,
                  "note": "", "eventType": "onEntry", "minimumDuration": 60 },
                { "identifier": "campus", "latitude": 52.52, "longitude": 13.405, "radius": 500,
                  "note": "", "eventType": ["onEntry", "onDwell"], "dwell": 300 } ] } }
            """
        var lane = try LaneFixture(fences: nested)
        let past = lane.now - 2_000
        _ = lane.ownTracks("alice/phone", 52.50, 13.405, tst: past)
        let entered = lane.ownTracks("alice/phone", 52.52, 13.405, tst: past + 10)
        #expect(entered.events.map { $0["fence"] as? String } == ["campus"], "the gate waits 60 s")
        let confirmed = lane.advance(60).events
        #expect(confirmed.map { $0["fence"] as? String } == ["gate"], "the campus dwell is 240 s away on the phone's clock")
        #expect(lane.advance(239).events.isEmpty)
        #expect(lane.advance(1).events.map { $0["event"] as? String } == ["dwell"])
    }

    /// With no later position, a change a queued position showed is confirmed once its
    /// minimum duration has passed since that position arrived, and carries its time.
    @Test func aQueuedPositionsChangeIsConfirmedItsMinimumDurationAfterItArrived() throws {
        var lane = try LaneFixture(fences: Self.fences)
        let past = lane.now - 3_000
        _ = lane.ownTracks("alice/phone", 52.52, 13.405, tst: past)
        _ = lane.ownTracks("alice/phone", 52.50, 13.30, tst: past + 1_000)
        #expect(lane.advance(119).events.filter { $0["fence"] as? String == "shop" }.isEmpty, "not yet")
        let confirmed = lane.advance(1).events.filter { $0["fence"] as? String == "shop" }
        #expect(confirmed.map { $0["event"] as? String } == ["enter"])
        #expect(confirmed.first?["tst"] as? Int == Int(past + 1_000), "the time of the position that showed it")
    }

    /// A tick that fires a timer and republishes the device's retained topics after a
    /// connection republishes what the timer left: the shell publishes the timer's
    /// messages first and the republished ones after them, so those are the values that
    /// stay retained.
    @Test func whatATickRepublishesIsTheStateItsTimersLeft() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.52, 13.405)
        lane.now += 60
        _ = lane.ownTracks("alice/phone", 52.50, 13.30)
        lane.now += 119.9
        lane.core.republishAll()
        let effects = lane.advance(0.1)
        #expect(effects.events.map { $0["event"] as? String } == ["enter"], "the shop, confirmed by the clock")
        #expect(effects.outboxText("geotify/tracker/alice/phone") == "shop")
        let republished = Dictionary(effects.direct.map { ($0.topic, String(decoding: $0.payload, as: UTF8.self)) }, uniquingKeysWith: { $1 })
        #expect(republished["geotify/tracker/alice/phone"] == "shop")
        #expect(republished["geotify/presence/alice/phone/shop"] == "inside")
        #expect(republished["geotify/badge/alice/phone"] == effects.outboxText("geotify/badge/alice/phone"))
        for message in effects.outbox where message.retain {
            #expect(republished[message.topic].map { Array($0.utf8) } ?? message.payload == message.payload, "\(message.topic)")
        }
    }

    @Test func aPreviewExpiresWithTheClock() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.previewTimeout = 60 }
        let preview = lane.command("alice/phone", #"{"action":"preview","change":{"action":"delete","fence":"shop"}}"#)
        let token = try #require(preview.reply("alice/phone")?["token"] as? String)
        _ = lane.advance(61)
        let late = lane.command("alice/phone", #"{"action":"commit","token":"\#(token)"}"#)
        #expect((late.reply("alice/phone")?["error"] as? [String: Any])?["code"] as? String == "expired_token")
        #expect(late.fenceWrites.isEmpty)
        let again = lane.command("alice/phone", #"{"action":"preview","change":{"action":"delete","fence":"shop"}}"#)
        let second = try #require(again.reply("alice/phone")?["token"] as? String)
        _ = lane.advance(200)
        #expect(lane.core.previewCount == 0, "expired previews are forgotten: their memory returns")
        let forgotten = lane.command("alice/phone", #"{"action":"commit","token":"\#(second)"}"#)
        #expect((forgotten.reply("alice/phone")?["error"] as? [String: Any])?["code"] as? String == "unknown_token")
    }

    /// A preview lives `previewTimeout` seconds and not a moment longer: a commit at the
    /// time its reply gave as `expires` is refused as expired; one just before is taken.
    @Test func aPreviewExpiresAtTheTimeItsReplyGives() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.previewTimeout = 60 }
        let delete = #"{"action":"preview","change":{"action":"delete","fence":"shop"}}"#
        let peek = try #require(lane.command("alice/phone", delete).reply("alice/phone"))
        let token = try #require(peek["token"] as? String)
        #expect(peek["expires"] as? Double == lane.now + 60)
        _ = lane.advance(60)
        let late = lane.command("alice/phone", #"{"action":"commit","token":"\#(token)"}"#)
        #expect((late.reply("alice/phone")?["error"] as? [String: Any])?["code"] as? String == "expired_token")
        #expect(late.fenceWrites.isEmpty)
        let again = try #require(lane.command("alice/phone", delete).reply("alice/phone")?["token"] as? String)
        _ = lane.advance(59)
        #expect(lane.command("alice/phone", #"{"action":"commit","token":"\#(again)"}"#).fenceWrites.count == 1)
    }

    @Test func afterAStartTheRetainedTopicsArePublishedAgainFromTheSavedStateOnceConnected() throws {
        var saved = DeviceState(badge: 3, revision: 1, fences: [FenceState(fence: "home", since: 1_699_999_000)])
        saved.lastFix = Fix(device: "alice/phone", coordinate: Coordinate(latitude: 52.52, longitude: 13.405), accuracy: 5, timestamp: 1_699_999_000)
        var lane = try LaneFixture(fences: Self.fences, states: ["alice/phone": saved])
        #expect(lane.advance(0.2).direct.isEmpty, "not before the connection: the messages would only wait for it")
        lane.core.republishAll()
        let effects = lane.advance(0.2)
        let topics = effects.direct.map(\.topic)
        #expect(topics == [
            "geotify/badge/alice/phone", "geotify/state/alice/phone", "geotify/tracker/alice/phone",
            "geotify/presence/alice/phone/home", "geotify/presence/alice/phone/shop",
        ])
        #expect(effects.direct.map { String(decoding: $0.payload, as: UTF8.self) }.contains("inside"))
        #expect(lane.advance(0.2).direct.isEmpty, "once")
    }

    /// A fence whose relation is not known yet (the device has seen it, but no fix was
    /// confident enough to say inside or outside) gets no presence after a connection:
    /// `outside` would be a guess.
    @Test func aFenceNotYetEstablishedIsNotRepublished() throws {
        var saved = DeviceState(badge: 0, revision: 1, fences: [
            FenceState(fence: "home", since: 1_699_999_000),
            FenceState(fence: "shop", inside: false, since: 1_699_999_000, established: false),
        ])
        saved.lastFix = Fix(device: "alice/phone", coordinate: Coordinate(latitude: 52.52, longitude: 13.405), accuracy: 5, timestamp: 1_699_999_000)
        var lane = try LaneFixture(fences: Self.fences, states: ["alice/phone": saved])
        lane.core.republishAll()
        let effects = lane.advance(0.2)
        #expect(effects.direct.map(\.topic) == [
            "geotify/badge/alice/phone", "geotify/state/alice/phone", "geotify/tracker/alice/phone",
            "geotify/presence/alice/phone/home",
        ])
    }

    @Test func afterAConnectionEveryDevicesLastValuesArePublishedAgainAShareATick() throws {
        let devices = (0..<(LaneCore.republishedPerTick + 50)).map { "van/\($0)" }
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.52, 13.405)
        for device in devices { _ = lane.plain(device, 10, 10) }
        #expect(lane.advance(0.2).direct.isEmpty, "nothing is republished before a connection")
        lane.core.republishAll()
        let first = lane.advance(0.2).direct
        let second = lane.advance(0.2).direct
        #expect(lane.advance(0.2).direct.isEmpty, "once a connection")
        let badges = (first + second).filter { $0.topic.hasPrefix("geotify/badge/") }.map(\.topic)
        #expect(first.filter { $0.topic.hasPrefix("geotify/badge/") }.count == LaneCore.republishedPerTick, "a share at a tick")
        #expect(Set(badges) == Set((devices + ["alice/phone"]).map { "geotify/badge/\($0)" }), "every device, once")
        #expect(badges.count == devices.count + 1)
        let alice = (first + second).filter { $0.topic.hasSuffix("/alice/phone") || $0.topic.contains("/alice/phone/") }
        #expect(alice.map(\.topic) == [
            "geotify/badge/alice/phone", "geotify/state/alice/phone", "geotify/tracker/alice/phone",
            "geotify/presence/alice/phone/home", "geotify/presence/alice/phone/shop",
        ])
        #expect((first + second).allSatisfy { $0.retain && $0.qos == 0 }, "last values, at QoS 0")
    }

    /// The timers of the states loaded at start run on the clock from the start on,
    /// with no new fix: a stay begun before the restart dwells at entry + dwell, and a
    /// change pending before it is confirmed once its minimum duration has passed.
    @Test func theTimersOfTheStatesLoadedAtStartFireFromTheClock() throws {
        let start = 1_700_000_000.0
        let home = Coordinate(latitude: 52.52, longitude: 13.405)
        var staying = DeviceState(badge: 1, revision: 1, fences: [FenceState(fence: "home", since: start - 100)])
        staying.lastFix = Fix(device: "alice/phone", coordinate: home, accuracy: 5, timestamp: start - 100)
        var lane = try LaneFixture(fences: Self.fences, states: ["alice/phone": staying])
        #expect(lane.core.nextDeadline == start + 200)
        #expect(lane.advance(199).events.isEmpty, "not yet")
        let dwelled = lane.advance(1).events
        #expect(dwelled.map { $0["event"] as? String } == ["dwell"])
        #expect(dwelled.first?["tst"] as? Int == Int(start + 200))

        let shop = Coordinate(latitude: 52.50, longitude: 13.30)
        let arriving = PendingChange(inside: true, coordinate: shop, accuracy: 5, timestamp: start - 60)
        var pending = DeviceState(badge: 1, revision: 1, fences: [FenceState(fence: "shop", inside: false, since: start - 500, pending: arriving)])
        pending.lastFix = Fix(device: "alice/phone", coordinate: shop, accuracy: 5, timestamp: start - 60)
        lane = try LaneFixture(fences: Self.fences, states: ["alice/phone": pending])
        #expect(lane.advance(59).events.isEmpty, "not yet")
        let entered = lane.advance(1).events
        #expect(entered.map { $0["event"] as? String } == ["enter"])
        #expect(entered.first?["tst"] as? Int == Int(start - 60), "the entry carries the time of the fix that first showed it")
    }

    /// A fence's own minimum duration times the clock's confirmation, not the global one:
    /// a change is confirmed 120 s after the fix that showed it even where every other
    /// fence waits 600 s.
    @Test func aFencesOwnMinimumDurationTimesTheConfirmation() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.rules.minimumDuration = 600 }
        _ = lane.ownTracks("alice/phone", 52.52, 13.405)
        lane.now += 60
        _ = lane.ownTracks("alice/phone", 52.50, 13.30)
        let seen = lane.now
        #expect(lane.core.nextDeadline == seen + 120)
        #expect(lane.advance(119).events.filter { $0["fence"] as? String == "shop" }.isEmpty, "not yet")
        let confirmed = lane.advance(1).events.filter { $0["fence"] as? String == "shop" }
        #expect(confirmed.map { $0["event"] as? String } == ["enter"])
    }

    /// An expired preview is remembered as expired for one more `previewTimeout`, then
    /// forgotten at exactly that time: a commit just before hears "expired", one at that
    /// time "unknown".
    @Test func anExpiredPreviewIsForgottenOneTimeoutAfterItExpired() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.previewTimeout = 60 }
        let delete = #"{"action":"preview","change":{"action":"delete","fence":"shop"}}"#
        func code(_ effects: LaneEffects) -> String? {
            (effects.reply("alice/phone")?["error"] as? [String: Any])?["code"] as? String
        }
        let first = try #require(lane.command("alice/phone", delete).reply("alice/phone")?["token"] as? String)
        _ = lane.advance(119)
        #expect(code(lane.command("alice/phone", #"{"action":"commit","token":"\#(first)"}"#)) == "expired_token")
        let second = try #require(lane.command("alice/phone", delete).reply("alice/phone")?["token"] as? String)
        _ = lane.advance(120)
        #expect(lane.core.previewCount == 0)
        #expect(code(lane.command("alice/phone", #"{"action":"commit","token":"\#(second)"}"#)) == "unknown_token")
    }

    /// A new preview forgets the long-expired ones there and then, not only at the next
    /// tick: the count (the console's gauge) holds only what is still answered for.
    @Test func aNewPreviewForgetsTheLongExpiredOnesAtOnce() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.previewTimeout = 60 }
        let delete = #"{"action":"preview","change":{"action":"delete","fence":"shop"}}"#
        let old = try #require(lane.command("alice/phone", delete).reply("alice/phone")?["token"] as? String)
        lane.now += 200
        _ = try #require(lane.command("alice/phone", delete).reply("alice/phone")?["token"] as? String)
        #expect(lane.core.previewCount == 1)
        let late = lane.command("alice/phone", #"{"action":"commit","token":"\#(old)"}"#)
        #expect((late.reply("alice/phone")?["error"] as? [String: Any])?["code"] as? String == "unknown_token")
    }

    /// A transition the clock fires (here a dwell) is reported to the web console's live
    /// view like one a fix brings; a tick that fires nothing reports nobody.
    @Test func aTransitionTheClockFiresIsReportedToTheLiveView() throws {
        var lane = try LaneFixture(fences: Self.fences) { $0.http = ConsoleSettings() }
        _ = lane.ownTracks("alice/phone", 52.50, 13.405)
        lane.now += 60
        #expect(lane.ownTracks("alice/phone", 52.52, 13.405).observed == ["alice/phone"])
        #expect(lane.advance(299).observed.isEmpty, "nothing fired")
        let dwelled = lane.advance(1)
        #expect(dwelled.events.map { $0["event"] as? String } == ["dwell"])
        #expect(dwelled.observed == ["alice/phone"])
    }

    /// Without the web console nobody watches: a transition the clock fires reports
    /// nobody, as one a fix brings does not.
    @Test func withoutTheWebConsoleATransitionTheClockFiresReportsNobody() throws {
        var lane = try LaneFixture(fences: Self.fences)
        _ = lane.ownTracks("alice/phone", 52.50, 13.405)
        lane.now += 60
        let entered = lane.ownTracks("alice/phone", 52.52, 13.405)
        #expect(entered.events.map { $0["event"] as? String } == ["enter"])
        #expect(entered.observed.isEmpty)
        let dwelled = lane.advance(300)
        #expect(dwelled.events.map { $0["event"] as? String } == ["dwell"])
        #expect(dwelled.observed.isEmpty)
    }
}
