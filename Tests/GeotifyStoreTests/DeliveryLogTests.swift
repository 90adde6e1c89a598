import Foundation
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
        #expect(dead?.entry.eventID == "a1")
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

    @Test func aSecondConnectionSeesWhatTheFirstCommitted() throws {
        let path = directory.file("state.sqlite")
        let database = try Database(path: path)
        try database.execute("PRAGMA journal_mode = WAL")
        let log = try DeliveryLog(database: database)
        let queue = try DeliveryQueue(path: path)
        try database.transaction { () throws(StoreError) in try log.enqueue([entry("hook", "alice", "a1")], at: 5) }
        let head = try #require(try queue.heads().first)
        try queue.markDelivered(head.id)
        #expect(try log.heads().isEmpty)
        #expect(try log.counts().first?.delivered == 1)
    }

    private func counts(_ target: String, delivered: Int = 0, pending: Int = 0, retrying: Int = 0, dead: Int = 0, lastError: String? = nil, at: Double? = nil) -> DeliveryCounts {
        var counts = DeliveryCounts(target: target)
        counts.delivered = delivered
        counts.pending = pending
        counts.retrying = retrying
        counts.dead = dead
        counts.lastError = lastError
        counts.lastErrorAt = at
        return counts
    }
}
