import CSQLite
import Dispatch
import Synchronization

/// Copies the state database's write-ahead log back into the database file on a queue
/// of its own, so that no commit waits for the bulk of it.
///
/// SQLite's automatic checkpoint runs inside the commit that finds the log past 1 000
/// pages: that commit copies the log into the database and syncs both files, several
/// milliseconds on this kind of disk, while the lane that committed (and the network
/// thread it runs on) waits. Under position traffic that happened a few times a second
/// and was the tail of the publish-to-notification latency. Here the writing connection's
/// commits only ask (`watch`), and a connection of the checkpointer's own does a
/// passive checkpoint (it never blocks the writer). What a commit guarantees is
/// unchanged: the log is synced as before, and a crash at any point of a checkpoint
/// loses nothing, as with SQLite's own.
///
/// A passive checkpoint copies the log as far as it reached when it began, and the log
/// starts over only at a write that begins when all of it is copied. Commits go on
/// during the checkpoint, so the log has grown past what it copied by the time it ends.
/// Asking again whenever the log was past `pages` ran checkpoints back to back until one
/// happened to fall between two commits: two to nine every 0.3 s at 50 000 positions a
/// second, each syncing the log and the database. Asking only once the log had grown by
/// `pages` more stopped those, but then the log never started over and grew without
/// end. So the first commit after a checkpoint that copied all it found copies the few
/// pages appended meanwhile itself (`Step.catchUp`: a passive checkpoint on the writing
/// connection, in the commit, while no other commit can run; at most `catchUpPages`,
/// more go to the queue again), and the commit after it starts the log over. Otherwise
/// a commit asks once the log has grown by `pages` since the last checkpoint found it,
/// or since it started over (`afterCommit`).
///
/// Thread safety (why `@unchecked Sendable` is sound): `database` is used only on
/// `queue` (asserted), `requested`, `mark` and `logged` are atomic, and the rest is
/// immutable.
final class LogCheckpointer: @unchecked Sendable {
    /// How many log pages a commit leaves before it asks for a checkpoint: SQLite's
    /// default for its automatic one.
    static let pages: Int32 = 1_000
    /// The most pages a commit copies itself (`Step.catchUp`): about a millisecond of
    /// copying and syncing here. A log that went on by more (a checkpoint that ran long
    /// while large commits went on, as when the first fixes of 10 000 devices are saved)
    /// is left to another checkpoint on the queue.
    static let catchUpPages: Int32 = 64

    /// What a commit does about the log.
    enum Step: Equatable {
        case nothing
        /// Asks the checkpointer's queue for a checkpoint.
        case ask
        /// Copies the pages appended since a checkpoint that copied everything it found,
        /// on the writing connection, now, so that the next commit starts the log over.
        case catchUp
    }

    /// Where the log stood at the last checkpoint: its size in pages then (0 before the
    /// first, after one that failed, and once the log has started over), and whether
    /// that checkpoint copied all of it.
    struct Mark: Equatable {
        var log: Int32
        var complete: Bool

        static let empty = Mark(log: 0, complete: false)

        /// Both in one word, so that a commit reads them together.
        var word: UInt64 { UInt64(UInt32(bitPattern: log)) | (complete ? 1 << 32 : 0) }

        init(log: Int32, complete: Bool) {
            self.log = log
            self.complete = complete
        }

        init(word: UInt64) {
            log = Int32(bitPattern: UInt32(truncatingIfNeeded: word))
            complete = word >> 32 & 1 == 1
        }

        /// After a checkpoint with `result`: what it found and whether it copied it all;
        /// `empty` when it failed (so commits ask again at `pages`, as before any).
        init(after result: (status: Int32, log: Int32, copied: Int32)) {
            self = result.status == SQLITE_OK ? Mark(log: max(result.log, 0), complete: result.copied >= result.log) : .empty
        }
    }

    private let database: Database
    private let queue: DispatchQueue
    /// A checkpoint is queued or running: commits meanwhile ask for nothing more.
    private let requested = Atomic<Bool>(false)
    /// The last checkpoint's `Mark`, as its `word`.
    private let mark = Atomic<UInt64>(Mark.empty.word)
    /// The log's size in pages after the last commit (set by the committing connection's
    /// hook alone): a commit that finds the log shorter knows it started over.
    private let logged = Atomic<Int32>(0)

    /// The log's size in pages after the last commit (what tests look at).
    var loggedPages: Int32 { logged.load(ordering: .relaxed) }

    /// A checkpointer with its own connection to the database at `path`, checkpointing on
    /// `queue` (a serial queue; tests pass a suspended one to hold checkpoints back).
    init(path: String, queue: DispatchQueue = DispatchQueue(label: "Geotify.StateStore.checkpoint")) throws(StoreError) {
        database = try Database(path: path)
        // A connection learns that the database is in WAL mode when it first reads it;
        // until then a checkpoint does nothing.
        try database.execute("PRAGMA journal_mode = WAL")
        self.queue = queue
    }

    /// Makes `connection`'s commits ask for a checkpoint once the log holds `pages`
    /// pages, in place of SQLite's automatic checkpoint in the commit. `connection` must
    /// not outlive the checkpointer (the hook holds it unretained); `Connection` keeps it.
    func watch(_ connection: Database) {
        connection.onLogWritten(context: Unmanaged.passUnretained(self).toOpaque()) { context, handle, _, pages in
            guard let context else { return SQLITE_OK }
            Unmanaged<LogCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(pages: pages, on: handle)
            return SQLITE_OK
        }
    }

    /// What the hook does after a commit that left `pages` pages in the log of the
    /// writing connection `handle`.
    private func committed(pages: Int32, on handle: OpaquePointer?) {
        let previous = logged.exchange(pages, ordering: .relaxed)
        let (next, step) = LogCheckpointer.afterCommit(pages: pages, previous: previous, mark: Mark(word: mark.load(ordering: .acquiring)))
        switch step {
        case .nothing:
            break
        case .ask:
            request()
        case .catchUp:
            let result = Database.checkpointPassively(handle)
            // Complete now (no commit could run meanwhile): the next commit starts the log
            // over. Either way the commits after it measure from here, and catch up no more.
            mark.store(Mark(log: Mark(after: result).log, complete: false).word, ordering: .releasing)
            return
        }
        if let next { mark.store(next.word, ordering: .releasing) }
    }

    /// Queues a checkpoint unless one is queued or running already.
    func request() {
        guard requested.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        queue.async { [self] in
            checkpoint()
            requested.store(false, ordering: .releasing)
        }
    }

    /// What a commit that leaves the log at `pages` pages does, the commit before it
    /// having left `previous`, the last checkpoint having left `mark`; and the mark to
    /// keep (nil: unchanged).
    ///
    /// - A log no longer than before started over (a commit appends at least a page, so
    ///   one that leaves the log as long as the commit before it began it anew): its
    ///   growth is measured from 0 again.
    /// - A log past a checkpoint that copied all it found is caught up, or when it went
    ///   on by more than `catchUpPages`, checkpointed again on the queue.
    /// - Otherwise a commit asks once the log has grown by `pages` since the mark.
    static func afterCommit(pages: Int32, previous: Int32, mark: Mark) -> (mark: Mark?, step: Step) {
        if pages <= previous {
            return (.empty, pages >= LogCheckpointer.pages ? .ask : .nothing)
        }
        if mark.complete && pages > mark.log {
            return (nil, pages - mark.log <= LogCheckpointer.catchUpPages ? .catchUp : .ask)
        }
        return (nil, Int64(pages) >= Int64(mark.log) + Int64(LogCheckpointer.pages) ? .ask : .nothing)
    }

    private func checkpoint() {
        dispatchPrecondition(condition: .onQueue(queue))
        // Failures are left to the next request: a log that cannot be copied back keeps
        // growing but loses nothing, and a failing disk shows in the commits themselves.
        mark.store(Mark(after: database.checkpointPassively()).word, ordering: .releasing)
    }
}
