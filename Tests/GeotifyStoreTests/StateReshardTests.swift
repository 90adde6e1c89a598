import GeotifyCore
@testable import GeotifyStore
import Testing

/// A moved device's fence revisions in its new store's numbering: what it had seen stays
/// seen, what it had not stays new to it.
@Suite("State reshard")
struct StateReshardTests {
    typealias Revisions = StateReshard.Revisions

    @Test func seenSharedFencesStaySeenAndUnseenOnesNew() {
        // The source added plaza at 1 and park at 4; the target numbered them 2 and 3.
        let source = Revisions(known: ["#shared": ["plaza": 1, "park": 4], "u1/p": ["home": 2, "work": 5]], current: 5)
        let target = Revisions(known: ["#shared": ["plaza": 2, "park": 3]], current: 3)
        let state = DeviceState(badge: 2, revision: 4)
        let moved = StateReshard.translate(state, device: "u1/p", from: source, to: target)
        #expect(moved.state.revision == 3, "plaza and park seen in the source: seen in the target")
        #expect(moved.state.badge == 2)
        #expect(moved.own == ["home": 3, "work": 4], "home seen, work (added after its revision) new")
        #expect(moved.current == 4)
    }

    /// A device's own fence added at exactly its revision is one it has seen.
    @Test func anOwnFenceAddedAtTheDevicesRevisionStaysSeen() {
        let source = Revisions(known: ["#shared": ["plaza": 1], "u1/p": ["home": 4]], current: 4)
        let target = Revisions(known: ["#shared": ["plaza": 2]], current: 2)
        let moved = StateReshard.translate(DeviceState(revision: 4), device: "u1/p", from: source, to: target)
        #expect(moved.state.revision == 2)
        #expect(moved.own == ["home": 2])
        #expect(moved.current == 2)
    }

    @Test func aDifferentOrderMakesASeenFenceNewRatherThanAnUnseenOneSeen() {
        let source = Revisions(known: ["#shared": ["plaza": 1, "park": 3]], current: 3)
        let target = Revisions(known: ["#shared": ["plaza": 5, "park": 2]], current: 5)
        let moved = StateReshard.translate(DeviceState(revision: 2), device: "u1/p", from: source, to: target)
        #expect(moved.state.revision == 1, "below park, which it never saw")
    }

    @Test func aDeviceBeforeItsFirstFixStaysSo() {
        let source = Revisions(known: ["u1/p": ["home": 1]], current: 1)
        let moved = StateReshard.translate(DeviceState(), device: "u1/p", from: source, to: Revisions(known: [:], current: 7))
        #expect(moved.state.revision == nil)
        #expect(moved.own == ["home": 8])
        #expect(moved.current == 8, "the target's current revision moves up to its fences")
    }

    /// A reshard interrupted after it moved a dropped store's undelivered messages to
    /// instance 0's outbox, and run again, moves none of them twice (instance 0 would
    /// publish each twice); the dropped store's later ids pass the moved ones.
    @Test func aReshardRunAgainMovesNoMessageTwice() throws {
        let places = [TemporaryDirectory(), TemporaryDirectory()]
        let messages = (1...3).map { OutboxMessage(topic: "geotify/event/u\($0)/p", payload: Array("\($0)".utf8), qos: 1, retain: false) }
        do {
            _ = try StateStore(directory: places[0].path)
            let dropped = try StateStore(directory: places[1].path)
            let ids = try dropped.save(devices: [], outbox: messages)
            try dropped.watermark.write(OutboxWatermark.Marks(handed: ids[0], acknowledged: ids[0]))
        }
        // The first run stops after the move: deleting the moved messages fails.
        let dropped = try Database(path: places[1].file("state.sqlite"))
        try dropped.execute("""
            CREATE TRIGGER interrupt BEFORE DELETE ON outbox_batch BEGIN SELECT RAISE(ABORT, 'interrupted'); END;
            CREATE TRIGGER interruptUpdate BEFORE UPDATE ON outbox_batch BEGIN SELECT RAISE(ABORT, 'interrupted'); END;
            """)
        #expect(throws: StoreError.self) { try StateReshard.run(directories: places.map(\.path), from: 2, to: 1) }
        #expect(try StateStore(directory: places[0].path).pendingMessages().map(\.message) == Array(messages[1...]))
        try dropped.execute("DROP TRIGGER interrupt; DROP TRIGGER interruptUpdate")

        let report = try StateReshard.run(directories: places.map(\.path), from: 2, to: 1)
        #expect(report.messagesMoved == 0)
        #expect(try StateStore(directory: places[0].path).pendingMessages().map(\.message) == Array(messages[1...]), "each moved once")
        let left = try StateStore(directory: places[1].path)
        #expect(try left.pendingMessages().isEmpty)
        #expect(try left.save(devices: [], outbox: [messages[0]]) == [4], "past the moved ids")
        var notes: [String] = []
        try Database(path: places[0].file("state.sqlite")).prepare("SELECT key FROM meta WHERE key LIKE 'note:%'").query { notes.append($0.text(0)) }
        #expect(notes.isEmpty, "the record of the move is gone once the move is complete")
    }

    /// A moved state keeps whether the fence file named its device when it was saved: a
    /// move is no removal, and the new owner tells a device removed while the instances
    /// were stopped from one never named as the old one would.
    @Test func aMovedStateKeepsWhetherTheFileNamedItsDevice() throws {
        let places = [TemporaryDirectory(), TemporaryDirectory()]
        let devices = (0..<8).map { "u/\($0)" }
        let named = Set(devices.prefix(4))
        do {
            let old = try StateStore(directory: places[0].path)
            try old.save(devices: devices.map { ($0, DeviceState(badge: 1), named.contains($0)) }, outbox: [])
            _ = try StateStore(directory: places[1].path)
        }
        let report = try StateReshard.run(directories: places.map(\.path), from: 1, to: 2)
        #expect(report.moved > 0 && report.kept > 0)
        let stores = try places.map { try StateStore(directory: $0.path) }
        #expect(try stores[0].loadDevicesAndNames().named.union(try stores[1].loadDevicesAndNames().named) == named)
        #expect(try stores[1].loadDevicesAndNames().named == named.filter { ShardAssignment.shard(of: $0, among: 2) == 1 })
        #expect(try stores[0].loadDevicesAndNames().states.keys.allSatisfy { ShardAssignment.shard(of: $0, among: 2) == 0 },
                "the moved devices left instance 0's store")
    }

    /// A reshard that cannot be done is refused before it changes anything, saying why:
    /// directories that do not match the instances, an old instance's directory with no
    /// state, a new instance's directory that already holds states, and a dropped
    /// instance whose notifications still wait for a delivery target (they would be lost
    /// with it).
    @Test func aReshardThatCannotBeDoneIsRefusedSayingWhyAndChangesNothing() throws {
        let places = [TemporaryDirectory(), TemporaryDirectory(), TemporaryDirectory()]
        let paths = places.map(\.path)
        do {
            let first = try StateStore(directory: paths[0])
            try first.save(devices: [("u/0", DeviceState(badge: 1), true)], outbox: [])
        }
        func refusal(_ directories: [String], from: Int, to: Int) -> String? {
            let error = #expect(throws: StoreError.self) { try StateReshard.run(directories: directories, from: from, to: to) }
            return error?.description
        }
        #expect(refusal(Array(paths.prefix(1)), from: 1, to: 2)
            == "reshard: 1 → 2 needs 2 state directories, instance 0 first; 1 given")
        #expect(refusal(paths, from: 1, to: 2)
            == "reshard: 1 → 2 needs 2 state directories, instance 0 first; 3 given")
        #expect(refusal(Array(paths.prefix(2)), from: 2, to: 1)
            == "reshard: \(paths[1]) holds no state.sqlite; is it the state directory of instance 1?")

        do {
            let other = try StateStore(directory: paths[2])
            try other.save(devices: [("u/9", DeviceState(badge: 4), true)], outbox: [])
        }
        #expect(refusal([paths[0], paths[2]], from: 1, to: 2)
            == "reshard: \(paths[2]) already holds 1 device state, but instance 1 did not exist among 1")

        let queue = try DeliveryQueue(path: places[2].file("state.sqlite"))
        _ = try queue.enqueue(
            [DeliveryEntry(target: "hook", device: "u/9", eventID: "u/9/home/enter/1", payload: Array("{}".utf8))], at: 1_700_000_000)
        #expect(refusal([paths[0], paths[2]], from: 2, to: 1)
            == "reshard: \(paths[2]) still has 1 notification queued for delivery targets; run instance 1 under 2 instances until `geotify notify status` shows none, then reshard")
        // A delivery waiting for its retry is queued as much.
        let head = try #require(try queue.heads().first)
        try queue.scheduleRetry(head.id, at: 1_700_000_060, error: "HTTP 503", now: 1_700_000_000)
        #expect(try queue.counts().map(\.retrying) == [1])
        #expect(refusal([paths[0], paths[2]], from: 2, to: 1)
            == "reshard: \(paths[2]) still has 1 notification queued for delivery targets; run instance 1 under 2 instances until `geotify notify status` shows none, then reshard")

        #expect(try StateStore(directory: paths[0]).loadDevicesAndNames().states.keys.sorted() == ["u/0"], "instance 0 as it was")
        #expect(try StateStore(directory: paths[2]).loadDevicesAndNames().states.keys.sorted() == ["u/9"], "the other as it was")
    }

    /// A device found in two stores (a reshard interrupted after it wrote the new store
    /// and before it emptied the old one, or an old instance run again after that) is
    /// taken from the store of its owner among the old instances, whichever store is
    /// read first.
    @Test func aDeviceInTwoStoresIsTakenFromItsOldOwner() throws {
        let places = [TemporaryDirectory(), TemporaryDirectory()]
        let device = try #require((0..<50).map { "u/\($0)" }.first { ShardAssignment.shard(of: $0, among: 2) == 1 })
        do {
            try StateStore(directory: places[0].path).save(devices: [(device, DeviceState(badge: 1), true)], outbox: [])
            try StateStore(directory: places[1].path).save(devices: [(device, DeviceState(badge: 5), true)], outbox: [])
        }
        let report = try StateReshard.run(directories: places.map(\.path), from: 2, to: 1)
        #expect(report.moved == 1 && report.kept == 0)
        #expect(try StateStore(directory: places[0].path).loadDevicesAndNames().states[device]?.badge == 5, "the old owner's state")
        #expect(try StateStore(directory: places[1].path).loadDevicesAndNames().states.isEmpty)
    }

    /// A moved device's own fences that are new to it get a revision past the target's
    /// current one, and the target's current revision moves up to it: the fences the
    /// target's file adds next come after them, never at the same revision.
    @Test func theTargetsCurrentRevisionPassesTheMovedDevicesOwnFences() throws {
        let places = [TemporaryDirectory(), TemporaryDirectory()]
        let device = try #require((0..<50).map { "u/\($0)" }.first { ShardAssignment.shard(of: $0, among: 2) == 1 })
        do {
            _ = try StateStore(directory: places[0].path)
            try StateStore(directory: places[1].path).save(devices: [(device, DeviceState(badge: 1, revision: 5), true)], outbox: [])
        }
        // Instance 0 numbered the shared fences 1 and 2 and is at 2; instance 1 added
        // the device's own work at 9, after the device's revision 5.
        try Database(path: places[0].file("state.sqlite")).execute("""
            INSERT INTO fence_revision (device, fence, revision) VALUES ('#shared', 'plaza', 1), ('#shared', 'park', 2);
            INSERT OR REPLACE INTO meta (key, value) VALUES ('revision', 2);
            """)
        try Database(path: places[1].file("state.sqlite")).execute("""
            INSERT INTO fence_revision (device, fence, revision) VALUES ('#shared', 'plaza', 1), ('#shared', 'park', 2), ('\(device)', 'work', 9);
            INSERT OR REPLACE INTO meta (key, value) VALUES ('revision', 9);
            """)
        _ = try StateReshard.run(directories: places.map(\.path), from: 2, to: 1)
        let revisions = try StateStore(directory: places[0].path).loadRevisions()
        #expect(try StateStore(directory: places[0].path).loadDevicesAndNames().states[device]?.revision == 2, "plaza and park seen")
        #expect(revisions.known[device] == ["work": 3], "work new to it")
        #expect(revisions.current == 3)
    }

    /// A reshard takes every directory's lock: it refuses a directory a bridge uses.
    @Test func aReshardRefusesADirectoryInUse() throws {
        let places = [TemporaryDirectory(), TemporaryDirectory()]
        for place in places { _ = try StateStore(directory: place.path) }
        do {
            let held = try StateDirectoryLock(directory: places[1].path)
            let error = #expect(throws: StoreError.self) { try StateReshard.run(directories: places.map(\.path), from: 2, to: 1) }
            #expect(error?.reason.hasPrefix("another geotify process is using it") == true, "\(String(describing: error))")
            withExtendedLifetime(held) {}
        }
        #expect(throws: Never.self) { try StateReshard.run(directories: places.map(\.path), from: 2, to: 1) }
    }
}
