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

    @Test func afterAPartialCheckpointCommitsAskAgainOnlyOnceTheLogHasGrownAsMuchAgain() {
        #expect(LogCheckpointer.threshold(after: (0, 1_800, 1_800)) == LogCheckpointer.pages, "complete: the log starts over")
        #expect(LogCheckpointer.threshold(after: (0, 1_800, 300)) == 1_800 + LogCheckpointer.pages)
        #expect(LogCheckpointer.threshold(after: (1, -1, -1)) == LogCheckpointer.pages, "a failure: asked again as usual")
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
}
