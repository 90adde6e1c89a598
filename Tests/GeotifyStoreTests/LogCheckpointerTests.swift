import Dispatch
import Foundation
@testable import GeotifyStore
import Testing

/// The state database's log is copied back into the database on the checkpointer's queue,
/// never inside a commit (`LogCheckpointer`), and nothing committed is lost either way.
@Suite("Checkpoints of the state database's log")
struct LogCheckpointerTests {
    let directory = TemporaryDirectory()

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test("commits leave the checkpoint to the checkpointer's queue; it copies the whole log back")
    func commitsLeaveTheCheckpointToItsQueue() throws {
        let checkpoints = DispatchQueue(label: "LogCheckpointerTests")
        checkpoints.suspend()
        let store = try StateStore(directory: directory.path, durability: .normal, checkpoints: checkpoints)
        let database = (directory.path as NSString).appendingPathComponent("state.sqlite")
        let before = size(database)

        // About 3 000 pages of log: three times the point where SQLite's own checkpoint,
        // run by the commit that crosses it, would have copied the log into the database.
        let message = OutboxMessage(topic: "geotify/event/a", payload: [UInt8](repeating: 7, count: 4_000), qos: 1, retain: false)
        for _ in 0..<300 {
            try store.save(devices: [], outbox: Array(repeating: message, count: 10))
        }
        #expect(size(database) == before, "no commit copied the log into the database")
        #expect(size(database + "-wal") > 2_500 * 4_096)

        checkpoints.resume()
        checkpoints.sync {}
        #expect(size(database) > 2_500 * 4_096, "the checkpointer copied the log back")
        #expect(try StateStore(directory: directory.path).pendingMessages().count == 3_000)
    }
}

/// What the checkpointer does after a checkpoint that could not copy the whole log.
@Suite("Checkpoints that leave pages behind")
struct PartialCheckpointTests {
    let directory = TemporaryDirectory()

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    @Test func commitsAskOnlyOnceTheLogHasGrownByPagesSinceTheLastCheckpointOrSinceItStartedOver() {
        let pages = LogCheckpointer.pages
        #expect(LogCheckpointer.checkpointed(after: (0, 1_800, 1_800)) == 1_800, "complete")
        #expect(LogCheckpointer.checkpointed(after: (0, 1_800, 300)) == 1_800, "partial")
        #expect(LogCheckpointer.checkpointed(after: (1, -1, -1)) == 0, "a failure: asked again as before any checkpoint")

        #expect(LogCheckpointer.afterCommit(pages: pages - 1, previous: pages - 5, checkpointed: 0) == (nil, false))
        #expect(LogCheckpointer.afterCommit(pages: pages, previous: pages - 5, checkpointed: 0) == (nil, true))
        // After a checkpoint found 1 800 pages, commits that go on appending (they began
        // while it ran, so the log could not start over) ask only 1 000 pages later.
        #expect(LogCheckpointer.afterCommit(pages: 1_810, previous: 1_800, checkpointed: 1_800) == (nil, false))
        #expect(LogCheckpointer.afterCommit(pages: 2_799, previous: 2_790, checkpointed: 1_800) == (nil, false))
        #expect(LogCheckpointer.afterCommit(pages: 2_800, previous: 2_790, checkpointed: 1_800) == (nil, true))
        // A log that started over is measured from 0 again, and asks at 1 000 pages.
        #expect(LogCheckpointer.afterCommit(pages: 4, previous: 1_810, checkpointed: 1_800) == (0, false))
        #expect(LogCheckpointer.afterCommit(pages: pages, previous: pages - 5, checkpointed: 0) == (nil, true))
        #expect(LogCheckpointer.afterCommit(pages: pages + 7, previous: 1_810, checkpointed: 1_800) == (0, true))
    }

    /// A reader's snapshot holds the first checkpoint back, so it leaves most of the log
    /// behind. The commits after it, while the log is short of its size then plus
    /// `pages`, run no checkpoint (the database file does not grow); the commit past
    /// that asks, and the checkpoint copies the log back.
    @Test func aPartialCheckpointIsNotRepeatedAtEveryCommit() throws {
        let path = directory.file("log.sqlite")
        let writer = try Database(path: path)
        try writer.execute("PRAGMA journal_mode = WAL; CREATE TABLE page (bytes BLOB NOT NULL)")
        let queue = DispatchQueue(label: "PartialCheckpointTests")
        let checkpointer = try LogCheckpointer(path: path, queue: queue)
        checkpointer.watch(writer)
        let insert = try writer.prepare("INSERT INTO page (bytes) VALUES (?)")
        let commit = { (pages: Int) throws(StoreError) in
            for _ in 0..<pages { try insert.run([.blob([UInt8](repeating: 1, count: 3_000))]) }
        }

        let reader = try Database(path: path)
        try reader.execute("PRAGMA journal_mode = WAL; BEGIN")
        try reader.prepare("SELECT count(*) FROM page").query { _ in }
        queue.suspend()
        try commit(1_100)
        queue.resume()
        queue.sync {}
        try reader.execute("COMMIT")
        let afterPartial = size(path)
        #expect(size(path + "-wal") > 1_000 * 4_096, "the snapshot kept the log from being copied")

        try commit(300)
        queue.sync {}
        #expect(size(path) == afterPartial, "no checkpoint while the log grew by less than pages")

        try commit(900)
        queue.sync {}
        #expect(size(path) > afterPartial + 1_000 * 4_096, "past the log's size then plus pages: copied back")
    }

    /// A commit whose transaction began while a complete checkpoint ran appends to the log
    /// (it cannot start over under the commit's snapshot), past `pages`: it asks for no
    /// checkpoint (before, it ran one after every such commit). Commits begun after the
    /// next checkpoint start the log over, and the commit that takes it to `pages` again
    /// asks.
    @Test func commitsBegunDuringACompleteCheckpointDoNotRunAnotherOne() throws {
        let path = directory.file("log.sqlite")
        let writer = try Database(path: path)
        try writer.execute("PRAGMA journal_mode = WAL; CREATE TABLE page (bytes BLOB NOT NULL)")
        let queue = DispatchQueue(label: "PartialCheckpointTests.complete")
        let checkpointer = try LogCheckpointer(path: path, queue: queue)
        checkpointer.watch(writer)
        let insert = try writer.prepare("INSERT INTO page (bytes) VALUES (?)")
        let commit = { (pages: Int) throws(StoreError) in
            for _ in 0..<pages { try insert.run([.blob([UInt8](repeating: 1, count: 3_000))]) }
        }

        queue.suspend()
        try commit(1_050)
        // A transaction that reads (so takes its snapshot) before the checkpoint runs.
        try writer.execute("BEGIN")
        try writer.prepare("SELECT count(*) FROM page").query { _ in }
        try commit(1)
        queue.resume()
        queue.sync {}
        let afterFirst = size(path)
        #expect(afterFirst > 1_000 * 4_096, "the first checkpoint copied the whole log back")
        try writer.execute("COMMIT")
        #expect(size(path + "-wal") > 1_050 * 4_096, "the commit appended to the log")
        try commit(20)
        queue.sync {}
        #expect(size(path) == afterFirst, "no checkpoint for commits that appended to a log just checkpointed")

        queue.suspend()
        try commit(600)
        queue.resume()
        queue.sync {}
        let afterSecond = size(path)
        #expect(afterSecond > afterFirst, "1 000 pages on: copied back")
        // A commit here writes three pages to the log: the row's own, the page above it
        // and the database's first (its size).
        try commit(300)
        queue.sync {}
        #expect(size(path) == afterSecond, "the log started over: no checkpoint before 1 000 pages")
        try commit(100)
        queue.sync {}
        #expect(size(path) > afterSecond, "the log started over and reached 1 000 pages: copied back")
    }
}
