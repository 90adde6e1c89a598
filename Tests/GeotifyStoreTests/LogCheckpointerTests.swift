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

    /// A database of one table whose commits a checkpointer watches, checkpointing on
    /// `queue`.
    private struct WatchedLog {
        let path: String
        let writer: Database
        let queue = DispatchQueue(label: "PartialCheckpointTests")
        let checkpointer: LogCheckpointer
        private let insert: Statement

        init(_ directory: TemporaryDirectory) throws {
            path = directory.file("log.sqlite")
            writer = try Database(path: path)
            try writer.execute("PRAGMA journal_mode = WAL; CREATE TABLE page (bytes BLOB NOT NULL)")
            checkpointer = try LogCheckpointer(path: path, queue: queue)
            checkpointer.watch(writer)
            insert = try writer.prepare("INSERT INTO page (bytes) VALUES (?)")
        }

        /// `count` commits of a row of 3 000 bytes each.
        func commit(_ count: Int) throws {
            for _ in 0..<count { try insert.run([.blob([UInt8](repeating: 1, count: 3_000))]) }
        }
    }

    @Test func commitsAskOnlyOnceTheLogHasGrownByPagesSinceTheLastCheckpointOrSinceItStartedOver() {
        typealias Mark = LogCheckpointer.Mark
        let pages = LogCheckpointer.pages
        #expect(Mark(after: (0, 1_800, 1_800)) == Mark(log: 1_800, complete: true))
        #expect(Mark(after: (0, 1_800, 300)) == Mark(log: 1_800, complete: false))
        #expect(Mark(after: (1, -1, -1)) == .empty, "a failure: asked again as before any checkpoint")
        #expect(Mark(word: Mark(log: 1_800, complete: true).word) == Mark(log: 1_800, complete: true))
        #expect(Mark(word: Mark(log: Int32.max, complete: false).word) == Mark(log: Int32.max, complete: false))

        #expect(LogCheckpointer.afterCommit(pages: pages - 1, previous: pages - 5, mark: .empty) == (nil, .nothing))
        #expect(LogCheckpointer.afterCommit(pages: pages, previous: pages - 5, mark: .empty) == (nil, .ask))
        // After a partial checkpoint found 1 800 pages, commits ask 1 000 pages later.
        let partial = Mark(log: 1_800, complete: false)
        #expect(LogCheckpointer.afterCommit(pages: 1_810, previous: 1_800, mark: partial) == (nil, .nothing))
        #expect(LogCheckpointer.afterCommit(pages: 2_799, previous: 2_790, mark: partial) == (nil, .nothing))
        #expect(LogCheckpointer.afterCommit(pages: 2_800, previous: 2_790, mark: partial) == (nil, .ask))
        // After a complete one, a commit that appended (it began while the checkpoint ran)
        // copies what it appended itself, instead of asking for another checkpoint.
        let complete = Mark(log: 1_800, complete: true)
        #expect(LogCheckpointer.afterCommit(pages: 1_810, previous: 1_800, mark: complete) == (nil, .catchUp))
        let most = 1_800 + LogCheckpointer.catchUpPages
        #expect(LogCheckpointer.afterCommit(pages: most, previous: 1_810, mark: complete) == (nil, .catchUp))
        // More than a commit should copy itself: left to the queue.
        #expect(LogCheckpointer.afterCommit(pages: most + 1, previous: 1_810, mark: complete) == (nil, .ask))
        // A log that started over is measured from 0 again, and asks at 1 000 pages.
        #expect(LogCheckpointer.afterCommit(pages: 4, previous: 1_810, mark: complete) == (.empty, .nothing))
        #expect(LogCheckpointer.afterCommit(pages: 4, previous: 1_810, mark: partial) == (.empty, .nothing))
        #expect(LogCheckpointer.afterCommit(pages: pages + 7, previous: 1_810, mark: partial) == (.empty, .ask))
        // As before any checkpoint: a log begun anew asks at `pages`, not one later.
        #expect(LogCheckpointer.afterCommit(pages: pages - 1, previous: 1_810, mark: partial) == (.empty, .nothing))
        #expect(LogCheckpointer.afterCommit(pages: pages, previous: 1_810, mark: partial) == (.empty, .ask))
    }

    /// A commit appends at least one page, so a commit that leaves the log exactly as
    /// long as the commit before it began the log anew: its growth is measured from 0, and
    /// a log of 1 810 new pages asks at once, not only once it reaches the old mark plus
    /// `pages` (2 800).
    @Test func aLogAsLongAsBeforeStartedOver() {
        let partial = LogCheckpointer.Mark(log: 1_800, complete: false)
        #expect(LogCheckpointer.afterCommit(pages: 1_810, previous: 1_810, mark: partial) == (.empty, .ask))
        #expect(LogCheckpointer.afterCommit(pages: 4, previous: 4, mark: partial) == (.empty, .nothing))
        #expect(LogCheckpointer.afterCommit(pages: 1_811, previous: 1_810, mark: partial) == (nil, .nothing), "one page more: appended")
    }

    /// A reader's snapshot holds the first checkpoint back, so it leaves most of the log
    /// behind. The commits after it, while the log is short of its size then plus
    /// `pages`, run no checkpoint (the database file does not grow); the commit past
    /// that asks, and the checkpoint copies the log back.
    @Test func aPartialCheckpointIsNotRepeatedAtEveryCommit() throws {
        let log = try WatchedLog(directory)
        let (path, queue, commit) = (log.path, log.queue, log.commit)

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
    /// (the log cannot start over under the commit's snapshot): that commit copies what
    /// it appended itself, so the next commit starts the log over (before, commits asked
    /// for checkpoint after checkpoint until one fell between two commits), and from
    /// there a commit asks again only at `pages`.
    @Test func aCommitAfterACompleteCheckpointCatchesUpAndTheLogStartsOver() throws {
        let log = try WatchedLog(directory)
        let (path, writer, queue, checkpointer, commit) = (log.path, log.writer, log.queue, log.checkpointer, log.commit)

        // A commit here writes three pages to the log: the row's own, the page above it
        // and the database's first (its size).
        queue.suspend()
        try commit(400)
        // A transaction that reads (so takes its snapshot) before the checkpoint runs.
        try writer.execute("BEGIN")
        try writer.prepare("SELECT count(*) FROM page").query { _ in }
        try commit(1)
        queue.resume()
        queue.sync {}
        #expect(size(path) > 400 * 3_000, "the checkpoint copied the log back")
        try writer.execute("COMMIT")
        let appended = checkpointer.loggedPages
        #expect(appended > 1_200, "the commit appended to the log")
        try commit(1)
        #expect(checkpointer.loggedPages < 10, "the log started over at the next commit")

        let afterFirst = size(path)
        try commit(300)
        queue.sync {}
        #expect(size(path) == afterFirst, "no checkpoint before the log has 1 000 pages again")
        try commit(100)
        queue.sync {}
        #expect(size(path) > afterFirst, "the log reached 1 000 pages: copied back")
    }

    /// A catch-up that a reader's snapshot held back (it could copy none of what the
    /// commit appended) is not tried again at the next commits, once the reader is gone:
    /// they ask only when the log has grown by `pages`, as after any partial checkpoint.
    @Test func aCatchUpAReaderHeldBackIsNotTriedAgainAtTheNextCommit() throws {
        let log = try WatchedLog(directory)
        let (path, writer, queue, checkpointer, commit) = (log.path, log.writer, log.queue, log.checkpointer, log.commit)

        queue.suspend()
        try commit(400)
        // A reader's snapshot of the 400 commits, and the writer's transaction, begun
        // before the checkpoint copies them.
        let reader = try Database(path: path)
        try reader.execute("BEGIN")
        try reader.prepare("SELECT count(*) FROM page").query { _ in }
        try writer.execute("BEGIN")
        try writer.prepare("SELECT count(*) FROM page").query { _ in }
        try commit(1)
        queue.resume()
        queue.sync {}
        // The checkpoint copied all it found; the commit appends and catches up, but the
        // reader keeps it from copying what the commit appended.
        try writer.execute("COMMIT")
        try reader.execute("COMMIT")
        let heldBack = size(path)
        let appended = checkpointer.loggedPages

        try commit(1)
        #expect(size(path) == heldBack, "no catch-up at the commit after the one held back")
        try commit(1)
        #expect(checkpointer.loggedPages > appended, "the log goes on: nothing copied it all")
    }
}
