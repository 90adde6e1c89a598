import Foundation
import GeotifyTestSupport
import Synchronization
import Testing
@testable import GeotifyStore

/// How a transaction shares the state file with another connection (the bridge's lanes
/// and its delivery worker each have one; so does a command run beside the bridge).
@Suite("Database")
struct DatabaseTests {
    /// A transaction holds the write lock from its start (`BEGIN IMMEDIATE`): another
    /// connection's write that comes between the transaction's read and its write waits
    /// (SQLite's busy handler) until the transaction has committed, and both writes are
    /// kept. A transaction that took the lock only at its write (`BEGIN`) would let the
    /// other write commit first and then be refused its own (`SQLITE_BUSY_SNAPSHOT`: what
    /// it read is no longer the newest, and no busy timeout waits that out), losing the
    /// lanes' or the worker's commit.
    @Test func aTransactionHoldsTheWriteLockFromItsStart() throws {
        let directory = TemporaryDirectory()
        let path = directory.file("state.sqlite")
        let database = try Database(path: path)
        try database.execute("PRAGMA journal_mode=WAL; CREATE TABLE writes(writer TEXT)")
        let other = Mutex<ThreadInKernel?>(nil)
        let otherWrite = Mutex<Result<Void, StoreError>?>(nil)
        let otherDone = DispatchSemaphore(value: 0)

        try database.transaction { () throws(StoreError) in
            try database.execute("SELECT count(*) FROM writes")
            Thread.detachNewThread {
                other.withLock { $0 = try? ThreadInKernel.current() }
                let result = Result { () throws(StoreError) in try Database(path: path).execute("INSERT INTO writes VALUES ('other')") }
                otherWrite.withLock { $0 = result }
                otherDone.signal()
            }
            let waits = waitUntil { otherWrite.withLock { $0 } != nil || other.withLock { $0 }?.sleeps == true }
            #expect(waits && otherWrite.withLock { $0 } == nil, "the other connection's write waits for the transaction")
            try database.execute("INSERT INTO writes VALUES ('transaction')")
        }
        #expect(otherDone.wait(timeout: .now() + 10) == .success)
        #expect(throws: Never.self) { try otherWrite.withLock { $0 }?.get() }
        var writers: [String] = []
        try database.prepare("SELECT writer FROM writes ORDER BY rowid").query { writers.append($0.text(0)) }
        #expect(writers == ["transaction", "other"], "both writes kept, the transaction's first")
    }

    /// Each of the bridge's connections to the state database opens it in WAL mode, syncing as the
    /// `durability` setting asks: SQLite reads back `synchronous` 2 (FULL, the log synced
    /// at every commit, which survives power loss) for `full` and 1 (NORMAL) for
    /// `normal`. With the two swapped, `durability: full` would lose commits to a power
    /// cut and nothing else would show it.
    @Test func aStateConnectionSyncsAsTheDurabilityAsks() throws {
        let directory = TemporaryDirectory()
        for (durability, synchronous) in [(StateStore.Durability.full, 2), (.normal, 1)] {
            let database = try Database.state(at: directory.file("state.sqlite"), durability: durability)
            var read: (mode: String, synchronous: Int64)?
            try database.prepare("SELECT journal_mode, synchronous FROM pragma_journal_mode, pragma_synchronous").query { row in
                read = (row.text(0), row.integer(1))
            }
            #expect(read?.mode == "wal", "\(durability)")
            #expect(read?.synchronous == Int64(synchronous), "\(durability)")
        }
    }
}
