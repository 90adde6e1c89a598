import Testing
@testable import GeotifyBridge
import GeotifyConsole
import GeotifyCore

/// What a lane tells the web console's live view (`LaneCore.liveUpdates(of:)`), through
/// the pure core: a device it forgets is told forgotten on every path that forgets one
/// (the fence file stops naming it; an idle device evicted to make room), so an open page
/// drops it, and a device's changes in one batch come as its state after the batch, so a
/// forgetting and a position of the same device never come in the wrong order.
@Suite("Lane core: live updates")
struct LaneCoreLiveUpdatesTests {
    typealias Removed = LaneCoreRemovedDevicesTests

    /// A lane whose devices the web console watches.
    static func watchedLane(fences: String = Removed.fences, maximumDevices: Int = 10_000) throws -> LaneFixture {
        try LaneFixture(fences: fences) {
            $0.http = ConsoleSettings()
            $0.maximumDevices = maximumDevices
            $0.deviceEvictionAge = 3_600
        }
    }

    /// The bug: a device the file stopped naming was forgotten by the lane, but the web
    /// console was told nothing, so an open page kept its marker until reloaded.
    @Test func aDeviceTheFileStopsNamingIsToldForgotten() throws {
        var lane = try Self.watchedLane()
        _ = lane.ownTracks("alice/phone", Removed.home.0, Removed.home.1)
        _ = lane.ownTracks("bob/phone", Removed.home.0, Removed.home.1)
        try lane.edit(Removed.withoutAlice)
        let removed = lane.advance(0.2)
        #expect(removed.forgotten == ["alice/phone"])
        #expect(lane.core.liveUpdates(of: removed.observed) == [.deviceForgotten("alice/phone")])
    }

    /// An idle device without fences evicted to make room for a new one is told
    /// forgotten, before the new device's state.
    @Test func anIdleDeviceEvictedToMakeRoomIsToldForgotten() throws {
        var lane = try Self.watchedLane(maximumDevices: 1)
        _ = lane.ownTracks("a/1", 1, 1)
        lane.now += 3_600
        let admitted = lane.ownTracks("b/1", 2, 2)
        #expect(admitted.forgotten == ["a/1"])
        let updates = lane.core.liveUpdates(of: admitted.observed)
        #expect(updates.count == 2)
        #expect(updates.first == .deviceForgotten("a/1"))
        guard case .device(let snapshot) = updates.last else {
            Issue.record("b/1's state is not told: \(updates)")
            return
        }
        #expect(snapshot.device == "b/1")
        #expect(snapshot.position?.latitude == 2)
    }

    /// A device forgotten and then heard from again in the same batch (evicted to make
    /// room, then a position of its own) is told as the new device it now is, once: the
    /// forgetting does not come after the position and hide it. One forgotten in a batch
    /// after its own change is told forgotten, once.
    @Test func aDevicesLastChangeInABatchIsWhatIsTold() throws {
        var lane = try Self.watchedLane(maximumDevices: 2)
        _ = lane.ownTracks("a/1", 1, 1)
        lane.now += 10
        _ = lane.ownTracks("b/1", 1, 1)
        lane.now += 4_000
        let effects = lane.handle([lane.ownTracksPosition("c/1", 3, 3), lane.ownTracksPosition("a/1", 2, 2)])
        #expect(effects.forgotten == ["a/1", "b/1"], "a/1 made room for c/1, then b/1 for a/1 again")
        let updates = lane.core.liveUpdates(of: effects.observed)
        #expect(updates.map(Self.subject) == ["a/1", "c/1", "b/1"])
        #expect(updates.last == .deviceForgotten("b/1"))
        guard case .device(let again) = updates.first else {
            Issue.record("a/1 is not told as a device: \(updates)")
            return
        }
        #expect(again.position?.latitude == 2)
        #expect(lane.core.liveUpdates(of: ["c/1", "b/1", "b/1"]).map(Self.subject) == ["c/1", "b/1"])
    }

    /// Without the web console nobody is reported, forgotten devices neither.
    @Test func withoutAWatcherNothingIsReported() throws {
        var lane = try LaneFixture(fences: Removed.fences)
        _ = lane.ownTracks("alice/phone", Removed.home.0, Removed.home.1)
        try lane.edit(Removed.withoutAlice)
        let removed = lane.advance(0.2)
        #expect(removed.forgotten == ["alice/phone"])
        #expect(removed.observed.isEmpty)
    }

    /// The device an update is about.
    static func subject(_ update: ConsoleUpdate) -> String {
        switch update {
        case .device(let snapshot): snapshot.device
        case .deviceForgotten(let device): device
        case .notification, .fencesChanged: ""
        }
    }
}
