import CSQLite
import Dispatch
import Synchronization

/// Copies the state database's write-ahead log back into the database file on a queue
/// of its own, so that no commit waits for it.
///
/// SQLite's automatic checkpoint runs inside the commit that finds the log past 1 000
/// pages: that commit copies the log into the database and syncs both files, several
/// milliseconds on this kind of disk, while the lane that committed (and the network
/// thread it runs on) waits. Under position traffic that happened a few times a second
/// and was the tail of the publish-to-notification latency. Here the writing connection's
/// commits only ask (`watch`), and a connection of the checkpointer's own does a
/// passive checkpoint (it never blocks the writer; a commit during it goes on appending
/// to the log, and the log starts over at the next commit after a complete one). What a
/// commit guarantees is unchanged: the log is synced as before, and a crash at any point
/// of a checkpoint loses nothing, as with SQLite's own.
///
/// A passive checkpoint copies the log as far as it reached when the checkpoint began.
/// The log starts over only at a commit whose transaction began after a complete
/// checkpoint; until then commits go on appending to it, past `pages`. Asking whenever
/// the log is past `pages` ran back-to-back checkpoints, each syncing the log and the
/// database: after a partial checkpoint about ten a second under paced position traffic,
/// and after a complete one four to ten in a row (for the commits that had begun while it
/// ran), every 0.3 s at 50 000 positions a second. So a commit asks only once the log has
/// grown by `pages` since the last checkpoint found it, or since it started over
/// (`afterCommit`).
///
/// Thread safety (why `@unchecked Sendable` is sound): `database` is used only on
/// `queue` (asserted), `requested`, `checkpointed` and `logged` are atomic, and the
/// rest is immutable.
final class LogCheckpointer: @unchecked Sendable {
    /// How many log pages a commit leaves before it asks for a checkpoint: SQLite's
    /// default for its automatic one.
    static let pages: Int32 = 1_000

    private let database: Database
    private let queue: DispatchQueue
    /// A checkpoint is queued and has not begun: commits meanwhile ask for nothing more.
    private let requested = Atomic<Bool>(false)
    /// The log's size in pages that commits measure its growth from: what the last
    /// checkpoint found; 0 before the first, after one that failed, and once the log has
    /// started over. (When the log starts over between the end of a checkpoint and this
    /// being set, the next checkpoint comes at up to twice `pages`: later, never more
    /// often.)
    private let checkpointed = Atomic<Int32>(0)
    /// The log's size in pages after the last commit (set by the committing connection's
    /// hook alone): a commit that finds the log shorter knows it started over.
    private let logged = Atomic<Int32>(0)

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
        connection.onLogWritten(context: Unmanaged.passUnretained(self).toOpaque()) { context, _, _, pages in
            guard let context else { return SQLITE_OK }
            let checkpointer = Unmanaged<LogCheckpointer>.fromOpaque(context).takeUnretainedValue()
            let previous = checkpointer.logged.exchange(pages, ordering: .relaxed)
            let decision = LogCheckpointer.afterCommit(
                pages: pages, previous: previous, checkpointed: checkpointer.checkpointed.load(ordering: .relaxed))
            if let from = decision.checkpointed { checkpointer.checkpointed.store(from, ordering: .relaxed) }
            if decision.asks { checkpointer.request() }
            return SQLITE_OK
        }
    }

    /// Queues a checkpoint unless one is queued already.
    func request() {
        guard requested.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        queue.async { [self] in
            requested.store(false, ordering: .releasing)
            checkpoint()
        }
    }

    /// What a commit that leaves the log at `pages` pages does, the commit before it
    /// having left `previous` and the last checkpoint having found `checkpointed`: when
    /// the log is shorter than before, it started over, and its growth is measured from 0
    /// again (`checkpointed`, nil when unchanged); the commit asks for a checkpoint once
    /// the log has grown by `pages` from there.
    static func afterCommit(pages: Int32, previous: Int32, checkpointed: Int32) -> (checkpointed: Int32?, asks: Bool) {
        let from: Int32? = pages < previous && checkpointed > 0 ? 0 : nil
        let asks = Int64(pages) >= Int64(from ?? checkpointed) + Int64(LogCheckpointer.pages)
        return (from, asks)
    }

    /// The log's size to remember after a checkpoint with `result`: what it found, or 0
    /// when it failed (so commits ask again at `pages`, as before any checkpoint).
    static func checkpointed(after result: (status: Int32, log: Int32, copied: Int32)) -> Int32 {
        result.status == SQLITE_OK ? max(result.log, 0) : 0
    }

    private func checkpoint() {
        dispatchPrecondition(condition: .onQueue(queue))
        // Failures are left to the next request: a log that cannot be copied back keeps
        // growing but loses nothing, and a failing disk shows in the commits themselves.
        checkpointed.store(LogCheckpointer.checkpointed(after: database.checkpointPassively()), ordering: .relaxed)
    }
}
