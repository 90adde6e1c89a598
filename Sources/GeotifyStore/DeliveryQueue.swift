import Synchronization

/// The delivery queue in the state database through a connection of its own, for the
/// delivery worker and for `geotify notify status|retry`, which may run beside a bridge.
///
/// The bridge's state store queues deliveries on its own connection, inside the
/// transaction that commits the state that caused them; this one only reads them and
/// records outcomes. SQLite in WAL mode serialises the two writers; each write here is
/// one short transaction.
package final class DeliveryQueue: Sendable {
    private let log: Mutex<DeliveryLog>
    /// The database file.
    package let path: String

    /// Opens the state database at `path` (creating the delivery tables when missing).
    /// `durability` is the state store's: `.full` makes an acknowledged delivery survive
    /// power loss too, at the cost of an fsync per outcome.
    package init(path: String, durability: StateStore.Durability = .normal) throws(StoreError) {
        let database = try Database(path: path)
        try database.execute("""
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL");
            """)
        log = Mutex(try DeliveryLog(database: database))
        self.path = path
    }

    /// Queues `entries` at `now` in a transaction of their own, for callers that do not
    /// commit state with them (tests, a sample).
    package func enqueue(_ entries: [DeliveryEntry], at now: Double) throws(StoreError) {
        try log.withLock { log throws(StoreError) in try log.enqueueInOwnTransaction(entries, at: now) }
    }

    /// The oldest queued delivery of each (target, device), earliest due first.
    package func heads() throws(StoreError) -> [DeliveryRow] {
        try log.withLock { log throws(StoreError) in try log.heads() }
    }

    /// Records that the target acknowledged delivery `id`; it is never attempted again.
    package func markDelivered(_ id: Int64) throws(StoreError) {
        try log.withLock { log throws(StoreError) in try log.markDelivered(id) }
    }

    /// Records a failed attempt of delivery `id` and makes it due again at `due`.
    package func scheduleRetry(_ id: Int64, at due: Double, error: String, now: Double) throws(StoreError) {
        try log.withLock { log throws(StoreError) in try log.scheduleRetry(id, at: due, error: error, now: now) }
    }

    /// Moves delivery `id` to the dead letters with `reason`; returns the row, or nil when
    /// it was no longer queued.
    @discardableResult
    package func moveToDeadLetters(_ id: Int64, reason: String, at now: Double) throws(StoreError) -> DeliveryRow? {
        try log.withLock { log throws(StoreError) in try log.moveToDeadLetters(id, reason: reason, at: now) }
    }

    /// Puts the dead letters of `target` (all when nil) back in the queue; returns how many.
    package func retryDeadLetters(target: String?, at now: Double) throws(StoreError) -> Int {
        try log.withLock { log throws(StoreError) in try log.retryDeadLetters(target: target, at: now) }
    }

    /// Where each target's deliveries stand, by target name.
    package func counts() throws(StoreError) -> [DeliveryCounts] {
        try log.withLock { log throws(StoreError) in try log.counts() }
    }
}
