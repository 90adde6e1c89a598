import Foundation
import GeotifyCore
import Synchronization
@testable import GeotifyStore
import Testing

@Suite("Delivery log")
struct DeliveryLogTests {
    let directory = TemporaryDirectory()

    func entry(_ target: String, _ device: String, _ event: String) -> DeliveryEntry {
        DeliveryEntry(target: target, device: device, eventID: event, payload: Array("{\"id\":\"\(event)\"}".utf8))
    }

    @Test func entriesCommitOrRollBackWithTheStateThatCausedThem() throws {
        let database = try Database(path: directory.file("state.sqlite"))
        try database.execute("CREATE TABLE device (id TEXT PRIMARY KEY, badge INTEGER)")
        let log = try DeliveryLog(database: database)
        try database.transaction { () throws(StoreError) in
            try database.execute("INSERT INTO device VALUES ('alice', 1)")
            try log.enqueue([entry("hook", "alice", "e1"), entry("ntfy", "alice", "e1")], at: 100)
        }
        #expect(throws: StoreError.self) {
            try database.transaction { () throws(StoreError) in
                try database.execute("INSERT INTO device VALUES ('bob', 1)")
                try log.enqueue([entry("hook", "bob", "e2")], at: 101)
                try database.execute("INSERT INTO no_such_table VALUES (1)")
            }
        }
        #expect(try log.heads().map(\.entry.eventID) == ["e1", "e1"])
        #expect(try log.heads().allSatisfy { $0.queued == 100 && $0.due == 100 && $0.attempts == 0 })
    }

    @Test func onlyTheOldestDeliveryOfEachTargetAndDeviceIsAHead() throws {
        let queue = try DeliveryQueue(path: directory.file("state.sqlite"))
        try queue.enqueue([entry("hook", "alice", "a1"), entry("hook", "alice", "a2"), entry("hook", "bob", "b1"), entry("ntfy", "alice", "a1")], at: 10)
        #expect(try queue.heads().map(\.entry.eventID) == ["a1", "b1", "a1"])
        let first = try #require(try queue.heads().first)
        try queue.markDelivered(first.id)
        #expect(try queue.heads().map { "\($0.entry.target):\($0.entry.eventID)" } == ["hook:a2", "hook:b1", "ntfy:a1"])
    }

    @Test func theHeadsAreTheOldestOfEachTargetAndDeviceHoweverTheyInterleave() throws {
        let queue = try DeliveryQueue(path: directory.file("state.sqlite"))
        let targets = ["hook", "hook-2", "ntfy"]
        // Names that sort next to each other, as prefixes, by case and beyond ASCII.
        let devices = ["", "a", "a/b", "a b", "aa", "B", "b", "é/1", "z/9"]
        /// What the queue holds, as the test expects it: id, target, device, due.
        var model: [(id: Int64, target: String, device: String, due: Double)] = []
        var state: UInt64 = 42
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        for index in 0..<600 {
            let target = targets[next(targets.count)]
            let device = devices[next(devices.count)]
            try queue.enqueue([entry(target, device, "e\(index)")], at: Double(index))
            model.append((Int64(index + 1), target, device, Double(index)))
        }
        for round in 0..<40 {
            let expected = Dictionary(grouping: model) { "\($0.target)|\($0.device)" }.values
                .compactMap { rows in rows.min { $0.id < $1.id } }
                .sorted { ($0.due, $0.id) < ($1.due, $1.id) }
            let heads = try queue.heads()
            #expect(heads.map(\.id) == expected.map(\.id), "round \(round)")
            #expect(heads.map(\.due) == expected.map(\.due))
            guard heads.count >= 4 else { break }
            for head in heads.prefix(3) {
                try queue.markDelivered(head.id)
                model.removeAll { $0.id == head.id }
            }
            let retried = heads[3 + next(heads.count - 3)]
            try queue.scheduleRetry(retried.id, at: Double(1000 + next(600)), error: "HTTP 503", now: 0)
            if let row = model.firstIndex(where: { $0.id == retried.id }) {
                model[row].due = try #require(try queue.heads().first { $0.id == retried.id }).due
            }
        }
        #expect(try queue.heads().count == targets.count * devices.count)
    }

    @Test func theSameEventForTheSameTargetIsQueuedOnce() throws {
        let queue = try DeliveryQueue(path: directory.file("state.sqlite"))
        try queue.enqueue([entry("hook", "alice", "a1")], at: 10)
        try queue.enqueue([entry("hook", "alice", "a1")], at: 11)
        #expect(try queue.heads().count == 1)
    }

    @Test func aDeliveredRowIsGoneForGoodAndCounted() throws {
        let path = directory.file("state.sqlite")
        do {
            let queue = try DeliveryQueue(path: path)
            try queue.enqueue([entry("hook", "alice", "a1")], at: 10)
            try queue.markDelivered(try #require(try queue.heads().first).id)
        }
        let reopened = try DeliveryQueue(path: path)
        #expect(try reopened.heads().isEmpty)
        #expect(try reopened.counts() == [counts("hook", delivered: 1)])
    }

    @Test func retriesDeadLettersAndTheirReturnAreCounted() throws {
        let queue = try DeliveryQueue(path: directory.file("state.sqlite"))
        try queue.enqueue([entry("hook", "alice", "a1"), entry("hook", "alice", "a2"), entry("hook", "bob", "b1")], at: 10)
        let heads = try queue.heads()
        try queue.scheduleRetry(heads[0].id, at: 50, error: "HTTP 503", now: 20)
        let retried = try #require(try queue.heads().first { $0.entry.eventID == "a1" })
        #expect(retried.attempts == 1 && retried.due == 50 && retried.lastError == "HTTP 503")
        #expect(try queue.counts() == [counts("hook", pending: 2, retrying: 1, lastError: "HTTP 503", at: 20)])

        let dead = try queue.moveToDeadLetters(retried.id, reason: "gave up", at: 60)
        #expect(dead?.row.entry.eventID == "a1" && dead?.pruned == 0)
        #expect(try queue.moveToDeadLetters(retried.id, reason: "again", at: 61) == nil)
        #expect(try queue.heads().map(\.entry.eventID) == ["a2", "b1"])
        #expect(try queue.counts() == [counts("hook", pending: 2, dead: 1, lastError: "gave up", at: 60)])

        #expect(try queue.retryDeadLetters(target: "ntfy", at: 70) == 0)
        #expect(try queue.retryDeadLetters(target: "all-but-named", at: 70) == 0)
        #expect(try queue.retryDeadLetters(target: nil, at: 70) == 1)
        let back = try #require(try queue.heads().first { $0.entry.device == "alice" })
        #expect(back.entry.eventID == "a1" && back.attempts == 0 && back.queued == 70 && back.due == 70)
        #expect(try queue.counts().first?.dead == 0)
    }

    @Test func eachDeviceAndEachTargetHoldsAtMostItsBoundAndTheNewestIsRefused() throws {
        let queue = try DeliveryQueue(path: directory.file("state.sqlite"))
        let bounds = ["hook": DeliveryBound(maximumQueued: 5, maximumQueuedPerDevice: 3)]
        let flood = (1...5).map { entry("hook", "alice", "a\($0)") } + [entry("ntfy", "alice", "n1")]
        let refused = try queue.enqueue(flood, at: 10, bounds: bounds)
        #expect(refused.map { "\($0.entry.eventID) \($0.bound) \($0.maximum)" } == ["a4 maximumQueuedPerDevice 3", "a5 maximumQueuedPerDevice 3"])
        let more = try queue.enqueue([entry("hook", "bob", "b1"), entry("hook", "bob", "b2"), entry("hook", "carol", "c1")], at: 11, bounds: bounds)
        #expect(more.map { "\($0.entry.eventID) \($0.bound) \($0.maximum)" } == ["c1 maximumQueued 5"])
        #expect(try queue.enqueue([entry("hook", "alice", "a1")], at: 12, bounds: bounds).isEmpty, "queued already: not refused again")

        // Delivering alice's oldest makes room for one more delivery to the target.
        try queue.markDelivered(try #require(try queue.heads().first { $0.entry.target == "hook" && $0.entry.device == "alice" }).id)
        let last = try queue.enqueue([entry("hook", "carol", "c2"), entry("hook", "alice", "a6")], at: 13, bounds: bounds)
        #expect(last.map { "\($0.entry.eventID) \($0.bound)" } == ["a6 maximumQueued"])
        var heads = try queue.heads()
        var queued: [String] = []
        while let head = heads.first(where: { $0.entry.target == "hook" }) {
            queued.append(head.entry.eventID)
            try queue.markDelivered(head.id)
            heads = try queue.heads()
        }
        #expect(Set(queued) == ["a2", "a3", "b1", "b2", "c2"])
        #expect(queued.filter { $0.hasPrefix("a") } == ["a2", "a3"], "a device's deliveries stay in order")
        #expect(try queue.counts() == [
            counts("hook", delivered: 6, refused: 4), counts("ntfy", pending: 1),
        ])
    }

    @Test func theTallyFollowsEveryConnectionAndADatabaseFromBeforeTheBoundsIsCountedOnce() throws {
        let path = directory.file("state.sqlite")
        do {
            let queue = try DeliveryQueue(path: path)
            try queue.enqueue([entry("hook", "alice", "a1"), entry("hook", "bob", "b1")], at: 1)
            // As a database written before the bounds: no tally, no triggers.
            let database = try Database(path: path)
            try database.execute("DROP TRIGGER delivery_queued; DROP TRIGGER delivery_unqueued; DROP TABLE delivery_bound")
            try database.execute("INSERT INTO delivery (target, device, event_id, payload, queued, due) VALUES ('hook', 'carol', 'c1', x'7B7D', 1, 1)")
        }
        let store = try StateStore(directory: directory.path)
        let queue = try DeliveryQueue(path: path)
        let bounds = ["hook": DeliveryBound(maximumQueued: 4, maximumQueuedPerDevice: 10)]
        func save(_ entries: DeliveryEntry...) throws -> [String] {
            var refused: [String] = []
            try store.save(devices: [], outbox: [], deliveries: entries, bounds: bounds, now: 2, refused: { refused = $0.map(\.entry.eventID) })
            return refused
        }
        #expect(try save(entry("hook", "dave", "d1"), entry("hook", "dave", "d2")) == ["d2"], "the 3 found at the opening and d1")
        try queue.markDelivered(try #require(try queue.heads().first).id)
        #expect(try save(entry("hook", "dave", "d2")).isEmpty, "a delivery by the other connection made room")
        try queue.moveToDeadLetters(try #require(try queue.heads().first).id, reason: "HTTP 400", at: 3)
        #expect(try queue.retryDeadLetters(target: "hook", at: 4) == 1)
        #expect(try save(entry("hook", "erin", "e1")) == ["e1"], "the dead letter put back counts again")
        #expect(try queue.counts().first?.pending == 4)
        #expect(try queue.counts().first?.refused == 2)
    }

    @Test func aTargetKeepsItsNewestDeadLettersAndCountsThoseItPrunes() throws {
        let queue = try DeliveryQueue(path: directory.file("state.sqlite"))
        try queue.enqueue((1...6).map { entry("hook", "alice", "a\($0)") } + [entry("ntfy", "alice", "n1")], at: 1)
        var pruned: [Int] = []
        for step in 1...6 {
            let head = try #require(try queue.heads().first { $0.entry.target == "hook" })
            pruned.append(try #require(try queue.moveToDeadLetters(head.id, reason: "HTTP 400", at: Double(10 + step), keeping: 4)).pruned)
        }
        let other = try #require(try queue.heads().first)
        #expect(try queue.moveToDeadLetters(other.id, reason: "HTTP 401", at: 20, keeping: 4)?.pruned == 0, "another target's dead letters are its own")
        #expect(pruned == [0, 0, 0, 0, 1, 1])
        #expect(try queue.counts() == [
            counts("hook", dead: 4, pruned: 2, lastError: "HTTP 400", at: 16), counts("ntfy", dead: 1, lastError: "HTTP 401", at: 20),
        ])
        #expect(try queue.retryDeadLetters(target: "hook", at: 30) == 4)
        #expect(try queue.heads().first { $0.entry.target == "hook" }?.entry.eventID == "a3", "the oldest two were pruned")
    }

    @Test func aSecondConnectionSeesWhatTheFirstCommitted() throws {
        let path = directory.file("state.sqlite")
        let database = try Database(path: path)
        try database.execute("PRAGMA journal_mode = WAL")
        let log = try DeliveryLog(database: database)
        let queue = try DeliveryQueue(path: path)
        try database.transaction { () throws(StoreError) in _ = try log.enqueue([entry("hook", "alice", "a1")], at: 5) }
        let head = try #require(try queue.heads().first)
        try queue.markDelivered(head.id)
        #expect(try log.heads().isEmpty)
        #expect(try log.counts().first?.delivered == 1)
    }

    /// The lanes' commits (the state store's connection) and the delivery worker's
    /// outcomes (a connection of its own) write the one database at once: each waits its
    /// turn, and neither is refused for the other being busy. (A transaction takes the
    /// write lock as it begins, so one that reads before it writes is not refused for a
    /// commit made meanwhile; and a writer that finds the lock taken waits for it.)
    @Test func theStoreAndTheWorkerWriteAtOnceWithoutRefusingEachOther() throws {
        let store = try StateStore(directory: directory.path)
        let queue = try DeliveryQueue(path: store.path)
        let rounds = 400
        try queue.enqueue((0..<rounds).map { entry("hook", "device/\($0)", "w\($0)") }, at: 0)
        let ids = try queue.heads().map(\.id)
        let message = OutboxMessage(topic: "geotify/event/alice/phone", payload: Array("{}".utf8), qos: 1, retain: false)
        let bounds = ["hook": DeliveryBound()]
        let deliveries = (0..<rounds).map { entry("hook", "alice/phone", "s\($0)") }
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { side in
            for step in 0..<rounds {
                do {
                    if side == 0 {
                        try store.save(
                            devices: [("alice/phone", DeviceState(badge: step), true)], outbox: [message],
                            deliveries: [deliveries[step]], bounds: bounds, now: Double(step))
                    } else {
                        try queue.scheduleRetry(ids[step], at: 1_000, error: "HTTP 503", now: Double(step))
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
        #expect(try queue.counts().first?.retrying == rounds)
        #expect(try store.countMessages(after: 0) == rounds)
    }

    /// Dead letters that died at the same time (a worker's clock read once for a burst)
    /// are pruned in the order they were queued: the newest `keeping` of them stay.
    @Test func deadLettersThatDiedAtOnceArePrunedOldestFirst() throws {
        let queue = try DeliveryQueue(path: directory.file("state.sqlite"))
        try queue.enqueue((1...4).map { entry("hook", "device/\($0)", "e\($0)") }, at: 1)
        for head in try queue.heads() { try queue.moveToDeadLetters(head.id, reason: "HTTP 400", at: 10, keeping: 2) }
        #expect(try queue.retryDeadLetters(target: "hook", at: 20) == 2)
        #expect(try queue.heads().map(\.entry.eventID).sorted() == ["e3", "e4"])
    }

    private func counts(
        _ target: String, delivered: Int = 0, pending: Int = 0, retrying: Int = 0, dead: Int = 0, refused: Int = 0, pruned: Int = 0,
        lastError: String? = nil, at: Double? = nil
    ) -> DeliveryCounts {
        var counts = DeliveryCounts(target: target)
        counts.delivered = delivered
        counts.pending = pending
        counts.retrying = retrying
        counts.dead = dead
        counts.refused = refused
        counts.pruned = pruned
        counts.lastError = lastError
        counts.lastErrorAt = at
        return counts
    }
}
