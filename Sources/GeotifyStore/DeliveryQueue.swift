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
        log = Mutex(try DeliveryLog(database: Database.state(at: path, durability: durability)))
        self.path = path
    }

    /// Queues `entries` at `now` in a transaction of their own, for callers that do not
    /// commit state with them (tests, a sample), each within its target's bound in
    /// `bounds`; returns those refused.
    @discardableResult
    package func enqueue(_ entries: [DeliveryEntry], at now: Double, bounds: [String: DeliveryBound] = [:]) throws(StoreError) -> [DeliveryRefusal] {
        try log.withLock { log throws(StoreError) in try log.enqueueInOwnTransaction(entries, at: now, bounds: bounds) }
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

    /// Moves delivery `id` to the dead letters with `reason`, keeping its target's newest
    /// `keeping` dead letters; returns the row and how many older ones were deleted, or nil
    /// when it was no longer queued.
    @discardableResult
    package func moveToDeadLetters(_ id: Int64, reason: String, at now: Double, keeping: Int = .max) throws(StoreError) -> (row: DeliveryRow, pruned: Int)? {
        try log.withLock { log throws(StoreError) in try log.moveToDeadLetters(id, reason: reason, at: now, keeping: keeping) }
    }

    /// Deletes the oldest dead letters of `target` beyond `keeping`, counting them under
    /// the target; returns how many.
    package func pruneDeadLetters(target: String, keeping: Int) throws(StoreError) -> Int {
        try log.withLock { log throws(StoreError) in try log.pruneDeadLettersInOwnTransaction(target: target, keeping: keeping) }
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
