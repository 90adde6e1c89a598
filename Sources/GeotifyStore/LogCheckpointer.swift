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
/// When commits went on meanwhile, the log cannot start over, and every commit would find
/// it past `pages` and ask again: back-to-back checkpoints, each syncing the database,
/// about ten a second under paced position traffic. So after a checkpoint that left
/// pages behind, commits ask again only once the log has grown by `pages` more; after a
/// complete one, from `pages` on, as the log starts over.
///
/// Thread safety (why `@unchecked Sendable` is sound): `database` is used only on
/// `queue` (asserted), `requested` and `threshold` are atomic, and the rest is immutable.
final class LogCheckpointer: @unchecked Sendable {
    /// How many log pages a commit leaves before it asks for a checkpoint: SQLite's
    /// default for its automatic one.
    static let pages: Int32 = 1_000

    private let database: Database
    private let queue: DispatchQueue
    /// A checkpoint is queued and has not begun: commits meanwhile ask for nothing more.
    private let requested = Atomic<Bool>(false)
    /// The log's size in pages from which a commit asks for a checkpoint.
    private let threshold = Atomic<Int32>(LogCheckpointer.pages)

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
            if pages >= checkpointer.threshold.load(ordering: .relaxed) { checkpointer.request() }
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

    /// The log size from which commits ask again, after a checkpoint with `result`.
    static func threshold(after result: (status: Int32, log: Int32, copied: Int32)) -> Int32 {
        let complete = result.status == SQLITE_OK && result.copied >= result.log
        return complete ? pages : max(result.log, 0) &+ pages
    }

    private func checkpoint() {
        dispatchPrecondition(condition: .onQueue(queue))
        // Failures are left to the next request: a log that cannot be copied back keeps
        // growing but loses nothing, and a failing disk shows in the commits themselves.
        threshold.store(LogCheckpointer.threshold(after: database.checkpointPassively()), ordering: .relaxed)
    }
}
