import Foundation
import GeotifyDelivery
import Synchronization
import Testing
@testable import GeotifyBridge
import GeotifyMQTT
@testable import GeotifyStore
import GeotifyTestSupport
import GeotifyTime

/// The lanes' shell around the database: the batches of one burst are committed
/// together, each lane's batch decided on its own queue (`Lane.handle(_:)`); and what
/// it records of them.
@Suite("Lanes committing a burst")
struct LaneCommitTests {
    /// Two lanes, as the bridge makes them, over a state directory of their own; no
    /// broker: the publisher keeps what it is given.
    final class Shell {
        let directory: URL
        let store: StateStore
        let publisher: Publisher
        let lanes: [Lane]
        let clock: ManualScheduler
        /// The fences in force, read from `fencesPath`.
        let book: LiveFenceBook
        let fencesPath: String
        /// How many times a commit woke the delivery workers.
        var deliveryWakes: Int { wakes.count.load(ordering: .relaxed) }
        private let wakes = Wakes()

        /// Two lanes over the fence file `contents` (JSON), notifying `targets`.
        init(fences contents: String = #"{"devices": {}}"#, targets: [Target] = []) throws {
            let clock = ManualScheduler()
            self.clock = clock
            directory = try makeTemporaryDirectory("lanes")
            let fences = directory.appendingPathComponent("fences.json").path
            fencesPath = fences
            try contents.write(toFile: fences, atomically: true, encoding: .utf8)
            var settings = Settings()
            settings.lanes = 2
            settings.homeAssistantEnabled = false
            settings.fencesPath = fences
            settings.notify.targets = targets
            let logger = Logger(level: .error, sink: { _ in })
            let counters = Counters()
            let messages = OutboundMessages(topics: Topics())
            store = try StateStore(directory: directory.appendingPathComponent("state").path)
            let health = StateHealth(logger: logger, counters: counters, messages: messages, uptime: { 0 })
            publisher = Publisher(counters: counters, health: health, waitingLimit: 1_000)
            let book = LiveFenceBook(
                file: FenceFile(path: fences, limits: settings.limits), store: store, logger: logger, counters: counters,
                messages: messages, report: { _ in })
            try book.load()
            self.book = book
            let presence = PresenceMessages(topics: Topics())
            let occupancy = Occupancy()
            let updates = LiveUpdates()
            let environment = Lane.Environment(
                store: store, publisher: publisher, counters: counters, logger: logger, fences: book, occupancy: occupancy,
                presence: presence, health: health,
                announcer: FenceChangeAnnouncer(
                    publisher: publisher, presence: presence, occupancy: occupancy, discovery: nil, waypoints: nil,
                    announceLimit: settings.limits.maximumFencesPerDevice, updates: updates),
                scheduler: clock, limits: settings.limits, wakeDeliveries: { [wakes] in wakes.count.add(1, ordering: .relaxed) },
                heldDeliveries: HeldDeliveries(bounds: [:]), refuseDeliveries: { _ in }, updates: updates)
            let admission = DeviceAdmission(maximum: settings.maximumDevices, perOwner: settings.maximumDevicesPerOwner)
            lanes = (0..<2).map { index in
                Lane(
                    index: index,
                    core: LaneCore(configuration: LaneConfiguration(settings: settings), admission: admission, states: [:], book: book.book, now: clock.now),
                    environment: environment)
            }
        }

        /// A position of `device` (at 52.5, 13.4 unless told); a first one announces the
        /// device's badge and state.
        func position(_ device: String, latitude: Double = 52.5) -> Inbound {
            let payload = #"{"_type":"location","lat":\#(latitude),"lon":13.4,"acc":5,"tst":\#(Int(clock.now))}"#
            return Inbound(route: .location(.ownTracks), device: device, message: MQTTMessage(topic: "owntracks/\(device)", payload: Array(payload.utf8)), arrival: clock.now)
        }

        /// A device on lane `index`.
        func device(onLane index: Int, _ name: String) -> String {
            (0...).lazy.map { "\(name)/\($0)" }.first { MessageRouter.lane(of: $0, among: 2) == index }!
        }

        /// The outbox as stored: the number of messages in each row, in id order.
        func rows() throws -> [Int] {
            var counts: [Int] = []
            try Database(path: store.path).prepare("SELECT count FROM outbox_batch ORDER BY first").query { counts.append(Int($0.integer(0))) }
            return counts
        }

        deinit {
            try? FileManager.default.removeItem(at: directory)
        }

        /// The count of wakes, for the lanes' environment to add to.
        private final class Wakes: Sendable {
            let count = Atomic(0)
        }
    }

    @Test func aBurstForBothLanesIsOneCommit() throws {
        let shell = try Shell()
        let alice = shell.device(onLane: 0, "alice"), bob = shell.device(onLane: 1, "bob")
        Lane.handle([(shell.lanes[0], [shell.position(alice)]), (shell.lanes[1], [shell.position(bob)])])
        let rows = try shell.rows()
        #expect(rows.count == 1, "one transaction, one outbox row: \(rows)")
        #expect(rows.first.map { $0 >= 2 } == true)
        #expect(try shell.store.loadDevices().keys.sorted() == [alice, bob])
        #expect(shell.publisher.pending == rows.reduce(0, +), "every committed message is queued for publishing")
    }

    /// A commit wakes the delivery workers (each wake plans: it reads their queue) only
    /// when it queued a delivery: the positions that notify no one, most of them, leave
    /// the workers asleep.
    @Test func onlyACommitThatQueuedADeliveryWakesTheDeliveryWorkers() throws {
        let hook = Target(name: "hook", destination: .webhook(WebhookDestination(
            url: "http://127.0.0.1:1", secret: Secret(value: "whsec_test_5f2b8c", source: "env TEST_SECRET"))))
        let shell = try Shell(
            fences: #"{"devices": {"alice/phone": [{"identifier": "home", "latitude": 52.5, "longitude": 13.4, "radius": 100, "eventType": "onEntry"}]}}"#,
            targets: [hook])
        let alice = "alice/phone"
        let lane = shell.lanes[MessageRouter.lane(of: alice, among: 2)]
        lane.handle([shell.position(alice, latitude: 52.6)])
        #expect(try shell.store.loadDevices()[alice] != nil, "the first position is committed")
        #expect(shell.deliveryWakes == 0, "far from home: nothing to deliver")
        lane.handle([shell.position(alice)])
        #expect(try DeliveryQueue(path: shell.store.path).heads().map(\.entry.target) == ["hook"], "the entry is queued for the hook")
        #expect(shell.deliveryWakes == 1)
    }

    @Test func eachLaneAloneCommitsOnItsOwn() throws {
        let shell = try Shell()
        let alice = shell.device(onLane: 0, "alice"), bob = shell.device(onLane: 1, "bob")
        shell.lanes[0].handle([shell.position(alice)])
        shell.lanes[1].handle([shell.position(bob)])
        #expect(try shell.rows().count == 2)
    }

    /// Each message's latency is recorded once: the statistics' report takes it and
    /// resets, `/metrics` still counts it since the start.
    @Test func latenciesSinceTheStartOutliveTheReportsResets() throws {
        let shell = try Shell()
        let lane = shell.lanes[0]
        let alice = shell.device(onLane: 0, "alice")
        lane.handle([shell.position(alice), shell.position(alice)])
        #expect(lane.statistics(resetting: true).latency.count == 2)
        lane.handle([shell.position(alice)])
        #expect(lane.statistics(resetting: false).latency.count == 1, "the report counts from its last reset")
        #expect(lane.latencySinceStart().count == 3)
        #expect(lane.statistics(resetting: true).latency.count == 1)
        #expect(lane.latencySinceStart().count == 3, "a reset loses nothing since the start")
    }

    /// A message's latency runs from its arrival to its commit, on the lane's clock: a
    /// position that arrived a quarter of a second before its lane took it took 0.25 s.
    @Test func aMessagesLatencyRunsFromItsArrivalToItsCommit() throws {
        let shell = try Shell()
        let lane = shell.lanes[0]
        let position = shell.position(shell.device(onLane: 0, "alice"))
        shell.clock.advance(by: 0.25)
        lane.handle([position])
        let latency = lane.statistics(resetting: false).latency
        #expect(latency.count == 1)
        #expect(latency.maximum == 0.25 && latency.sum == 0.25)
    }

    /// A batch whose commands write fences in between is handled by its lane alone, a
    /// commit a part, while the other lane's batch is committed on its own.
    @Test func aBatchInPartsIsCommittedPartByPart() throws {
        let shell = try Shell()
        let alice = shell.device(onLane: 0, "alice"), bob = shell.device(onLane: 1, "bob")
        let add = { (fence: String) in
            Inbound(
                route: .command, device: alice,
                message: MQTTMessage(topic: "geotify/cmd/\(alice)", payload: Array(#"{"id":"\#(fence)","action":"add","fence":{"identifier":"\#(fence)","latitude":52.5,"longitude":13.4,"radius":100,"eventType":"onEntry"}}"#.utf8)),
                arrival: shell.clock.now)
        }
        Lane.handle([(shell.lanes[0], [shell.position(alice), add("a"), add("b")]), (shell.lanes[1], [shell.position(bob)])])
        // Alice's position is committed with her first part; her second part (the second
        // add) commits nothing to the outbox; Bob's batch is committed on its own.
        #expect(try shell.rows().count == 2, "not one commit")
        #expect(try shell.store.loadDevices().keys.sorted() == [alice, bob])
    }

    /// A device the fence file stops naming whose position comes in the batch that
    /// forgets it (`LaneCore.leaveRemovedFences`, then a new device): its old state is
    /// deleted and its new one saved in the same commit, so the store holds what the lane
    /// does. The commit used to drop every save of a forgotten device, and the store lost
    /// the new state.
    @Test func aDeviceForgottenAndBackInOneBatchKeepsItsNewStateInTheStore() throws {
        let alice = "alice/phone"
        let shell = try Shell(fences: #"{"devices": {"alice/phone": [{"identifier": "home", "latitude": 52.5, "longitude": 13.4, "radius": 100, "eventType": "onEntryAndExit"}]}}"#)
        let lane = shell.lanes[MessageRouter.lane(of: alice, among: 2)]
        lane.handle([shell.position(alice)])
        #expect(try shell.store.loadDevices()[alice]?.isInside("home") == true)
        try #"{"devices": {}}"#.write(toFile: shell.fencesPath, atomically: true, encoding: .utf8)
        #expect(shell.book.reloadIfChanged(readContents: true) != nil)
        shell.clock.advance(by: 1)
        lane.handle([shell.position(alice)])
        let saved = try shell.store.loadDevices()[alice]
        #expect(saved != nil, "the new state is saved")
        #expect(saved?.fences.isEmpty == true, "the new one: the old was inside home")
        #expect(saved == lane.state(of: alice))
    }

    /// A device forgotten while no commit could be written (a failing disk) is deleted
    /// from the store with the next commit that succeeds, and only with that one: back
    /// in the file, with a new state saved, a later commit of another device in its lane
    /// leaves its state alone. (The failing disk here is a trigger that refuses every
    /// delete of a device row.)
    @Test func aDeviceForgottenWhileTheStoreFailedIsDeletedOnceItWorksAgainAndOnlyThen() throws {
        let alice = "alice/phone"
        let fences = #"{"devices": {"alice/phone": [{"identifier": "home", "latitude": 52.5, "longitude": 13.4, "radius": 100, "eventType": "onEntryAndExit"}]}}"#
        let shell = try Shell(fences: fences)
        let index = MessageRouter.lane(of: alice, among: 2)
        let lane = shell.lanes[index]
        let bob = shell.device(onLane: index, "bob")
        lane.handle([shell.position(alice)])
        #expect(try shell.store.loadDevices()[alice]?.isInside("home") == true)

        let database = try Database(path: shell.store.path)
        try database.execute("CREATE TRIGGER failing BEFORE DELETE ON device BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END")
        try #"{"devices": {}}"#.write(toFile: shell.fencesPath, atomically: true, encoding: .utf8)
        #expect(shell.book.reloadIfChanged(readContents: true) != nil)
        shell.clock.advance(by: 1)
        lane.handle([shell.position(bob)])
        #expect(try shell.store.loadDevices()[alice] != nil, "the commit that forgets her failed")
        #expect(try shell.store.loadDevices()[bob] == nil, "and bob's state went with it")

        try database.execute("DROP TRIGGER failing")
        shell.clock.advance(by: 1)
        lane.handle([shell.position(bob)])
        #expect(try shell.store.loadDevices()[alice] == nil, "forgotten with the next commit that works")
        #expect(try shell.store.loadDevices()[bob] != nil, "with bob's state, which the failed commit kept for it")

        try fences.write(toFile: shell.fencesPath, atomically: true, encoding: .utf8)
        #expect(shell.book.reloadIfChanged(readContents: true) != nil)
        shell.clock.advance(by: 1)
        lane.handle([shell.position(alice)])
        #expect(try shell.store.loadDevices()[alice]?.isInside("home") == true, "back in the file, home again")
        shell.clock.advance(by: 1)
        lane.handle([shell.position(bob, latitude: 52.6)])
        #expect(try shell.store.loadDevices()[alice] == lane.state(of: alice), "bob's commit forgets her no more")
    }
}
