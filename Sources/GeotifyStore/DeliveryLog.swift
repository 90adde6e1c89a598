/// The delivery queue's tables and statements on a `Database` handed to it: the
/// (notification, target) pairs waiting to go out, the dead letters, and a tally per target.
///
/// Each target's `DeliveryBound` holds: a new delivery past its bound is refused
/// (`enqueue` returns it), and a dead letter past its bound deletes the oldest. How many
/// deliveries wait for each target is kept in `delivery_bound` by triggers on the queue
/// (every connection's inserts and deletes, `geotify notify retry`'s too), so the check
/// in the lanes' commit reads that one row and counts the device's waiting deliveries
/// along an index up to its bound at most, never the whole queue.
///
/// It works on a connection it does not own, so the state store can queue deliveries in
/// the same transaction as the device states that caused them (`enqueue` opens no
/// transaction of its own), while the delivery worker and the CLI use one of their own
/// (`DeliveryQueue`); SQLite in WAL mode lets both share the file.
///
/// A delivery the target acknowledged is deleted in the transaction that counts it, so
/// once `markDelivered` returns, no restart sends it again. A crash between the target's
/// answer and that commit sends it once more, with the same idempotency key.
final class DeliveryLog {
    /// The tables, created when missing.
    static let schema = """
        CREATE TABLE IF NOT EXISTS delivery (
            id INTEGER PRIMARY KEY AUTOINCREMENT, target TEXT NOT NULL, device TEXT NOT NULL,
            event_id TEXT NOT NULL, payload BLOB NOT NULL, queued REAL NOT NULL, due REAL NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT,
            UNIQUE (target, event_id)
        );
        CREATE INDEX IF NOT EXISTS delivery_order ON delivery (target, device, id);
        CREATE TABLE IF NOT EXISTS delivery_dead (
            id INTEGER PRIMARY KEY, target TEXT NOT NULL, device TEXT NOT NULL, event_id TEXT NOT NULL,
            payload BLOB NOT NULL, queued REAL NOT NULL, attempts INTEGER NOT NULL, reason TEXT NOT NULL,
            died REAL NOT NULL
        );
        CREATE TABLE IF NOT EXISTS delivery_target (
            target TEXT PRIMARY KEY, delivered INTEGER NOT NULL DEFAULT 0, last_error TEXT, last_error_at REAL
        ) WITHOUT ROWID;
        CREATE INDEX IF NOT EXISTS delivery_dead_order ON delivery_dead (target, died, id);
        """

    /// Per target: the deliveries waiting (kept by triggers), and those the bounds
    /// refused or pruned from the dead letters.
    static let boundSchema = """
        CREATE TABLE IF NOT EXISTS delivery_bound (
            target TEXT PRIMARY KEY, queued INTEGER NOT NULL DEFAULT 0, refused INTEGER NOT NULL DEFAULT 0,
            pruned INTEGER NOT NULL DEFAULT 0
        ) WITHOUT ROWID;
        CREATE TRIGGER IF NOT EXISTS delivery_queued AFTER INSERT ON delivery BEGIN
            INSERT INTO delivery_bound (target, queued) VALUES (new.target, 1)
            ON CONFLICT (target) DO UPDATE SET queued = queued + 1;
        END;
        CREATE TRIGGER IF NOT EXISTS delivery_unqueued AFTER DELETE ON delivery BEGIN
            UPDATE delivery_bound SET queued = queued - 1 WHERE target = old.target;
        END;
        """

    private static let columns = "id, target, device, event_id, payload, queued, due, attempts, last_error"

    private let database: Database
    private let insert: Statement
    private let selectHeads: Statement
    private let delete: Statement
    private let countDelivered: Statement
    private let reschedule: Statement
    private let noteError: Statement
    private let bury: Statement
    private let selectRow: Statement
    private let measure: Statement
    private let countRefused: Statement
    private let prune: Statement
    private let countPruned: Statement

    /// Creates the tables on `database` when they are missing and prepares the statements.
    /// A database from before the bounds gets its tally of waiting deliveries counted once,
    /// in the transaction that creates the triggers that keep it.
    init(database: Database) throws(StoreError) {
        self.database = database
        try database.execute(DeliveryLog.schema)
        try database.transaction { () throws(StoreError) in
            var tallied = false
            try database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'delivery_bound'").query { _ in tallied = true }
            try database.execute(DeliveryLog.boundSchema)
            if !tallied {
                try database.execute("INSERT INTO delivery_bound (target, queued) SELECT target, COUNT(*) FROM delivery GROUP BY target")
            }
        }
        insert = try database.prepare("""
            INSERT OR IGNORE INTO delivery (target, device, event_id, payload, queued, due) VALUES (?, ?, ?, ?, ?, ?)
            """)
        // The head of each (target, device) by hopping along the `delivery_order` index
        // from one pair to the next (a loose index scan): one seek a pair, however many
        // deliveries wait behind the heads. `MIN(id) ... GROUP BY` read every queued row
        // on every plan, which a dead target's day of backlog made a busy core.
        selectHeads = try database.prepare("""
            WITH RECURSIVE head(id) AS (
                SELECT (SELECT id FROM delivery ORDER BY target, device, id LIMIT 1)
                UNION ALL
                SELECT COALESCE(
                    (SELECT next.id FROM delivery AS next WHERE next.target = last.target AND next.device > last.device
                     ORDER BY next.device, next.id LIMIT 1),
                    (SELECT next.id FROM delivery AS next WHERE next.target > last.target
                     ORDER BY next.target, next.device, next.id LIMIT 1))
                FROM head JOIN delivery AS last ON last.id = head.id
            )
            SELECT \(DeliveryLog.columns) FROM delivery WHERE id IN (SELECT id FROM head) ORDER BY due, id
            """)
        selectRow = try database.prepare("SELECT \(DeliveryLog.columns) FROM delivery WHERE id = ?")
        delete = try database.prepare("DELETE FROM delivery WHERE id = ?")
        countDelivered = try database.prepare("""
            INSERT INTO delivery_target (target, delivered) VALUES (?, 1)
            ON CONFLICT (target) DO UPDATE SET delivered = delivered + 1
            """)
        reschedule = try database.prepare("UPDATE delivery SET due = ?, attempts = attempts + 1, last_error = ? WHERE id = ?")
        noteError = try database.prepare("""
            INSERT INTO delivery_target (target, last_error, last_error_at) VALUES (?, ?, ?)
            ON CONFLICT (target) DO UPDATE SET last_error = excluded.last_error, last_error_at = excluded.last_error_at
            """)
        bury = try database.prepare("""
            INSERT OR REPLACE INTO delivery_dead (id, target, device, event_id, payload, queued, attempts, reason, died)
            SELECT id, target, device, event_id, payload, queued, attempts + 1, ?, ? FROM delivery WHERE id = ?
            """)
        // Whether the (target, event) is queued already, how many deliveries wait for the
        // device (counted up to the bound, along `delivery_order`), and for the target.
        measure = try database.prepare("""
            SELECT EXISTS (SELECT 1 FROM delivery WHERE target = ?1 AND event_id = ?3),
                (SELECT COUNT(*) FROM (SELECT 1 FROM delivery WHERE target = ?1 AND device = ?2 LIMIT ?4)),
                COALESCE((SELECT queued FROM delivery_bound WHERE target = ?1), 0)
            """)
        countRefused = try database.prepare("""
            INSERT INTO delivery_bound (target, refused) VALUES (?1, ?2) ON CONFLICT (target) DO UPDATE SET refused = refused + ?2
            """)
        prune = try database.prepare("""
            DELETE FROM delivery_dead WHERE id IN
                (SELECT id FROM delivery_dead WHERE target = ?1 ORDER BY died DESC, id DESC LIMIT -1 OFFSET ?2)
            """)
        countPruned = try database.prepare("""
            INSERT INTO delivery_bound (target, pruned) VALUES (?1, ?2) ON CONFLICT (target) DO UPDATE SET pruned = pruned + ?2
            """)
    }

    /// Queues `entries`, due at `now`, each within its target's bound in `bounds` (a
    /// target left out has none); returns those refused for their bound, counted under
    /// the target. Runs no transaction of its own: call it inside the one that commits
    /// the state that caused them. An entry whose (target, event id) is already queued is
    /// left out, so committing the same decision twice queues it once (and refuses none).
    @discardableResult
    func enqueue(_ entries: [DeliveryEntry], at now: Double, bounds: [String: DeliveryBound] = [:]) throws(StoreError) -> [DeliveryRefusal] {
        var refusals: [DeliveryRefusal] = []
        for entry in entries {
            if let bound = bounds[entry.target], let refusal = try refusal(of: entry, within: bound) {
                try countRefused.run([.text(entry.target), .integer(1)])
                refusals.append(refusal)
                continue
            }
            try insert.run([
                .text(entry.target), .text(entry.device), .text(entry.eventID), .blob(entry.payload), .real(now), .real(now),
            ])
        }
        return refusals
    }

    /// Adds `counts` (target → deliveries) to the targets' refused counts: those refused
    /// while no commit could be written (`DeliveryBound.hold`). Runs no transaction of
    /// its own.
    func countRefusals(_ counts: [String: Int]) throws(StoreError) {
        for (target, count) in counts.sorted(by: { $0.key < $1.key }) where count > 0 {
            try countRefused.run([.text(target), .integer(Int64(count))])
        }
    }

    /// Why `entry` may not be queued within `bound`, or nil.
    private func refusal(of entry: DeliveryEntry, within bound: DeliveryBound) throws(StoreError) -> DeliveryRefusal? {
        var refusal: DeliveryRefusal?
        try measure.query([.text(entry.target), .text(entry.device), .text(entry.eventID), .integer(Int64(bound.maximumQueuedPerDevice))]) { row in
            guard row.integer(0) == 0 else { return }
            refusal = bound.refusal(of: entry, queued: Int(row.integer(2)), queuedForDevice: Int(row.integer(1)))
        }
        return refusal
    }

    /// `enqueue` in a transaction of its own, for a connection that commits no state.
    func enqueueInOwnTransaction(_ entries: [DeliveryEntry], at now: Double, bounds: [String: DeliveryBound]) throws(StoreError) -> [DeliveryRefusal] {
        try database.transaction { () throws(StoreError) in try enqueue(entries, at: now, bounds: bounds) }
    }

    /// The oldest queued delivery of each (target, device), earliest due first: only these
    /// may be attempted, which keeps each device's deliveries to a target in order.
    func heads() throws(StoreError) -> [DeliveryRow] {
        var rows: [DeliveryRow] = []
        try selectHeads.query { row in rows.append(DeliveryLog.deliveryRow(row)) }
        return rows
    }

    /// The queued delivery with row id `id`, if it is still queued.
    func row(_ id: Int64) throws(StoreError) -> DeliveryRow? {
        var found: DeliveryRow?
        try selectRow.query([.integer(id)]) { row in found = DeliveryLog.deliveryRow(row) }
        return found
    }

    /// Records that the target acknowledged delivery `id`: removes it from the queue and
    /// counts it, in one transaction. A row no longer queued is left alone.
    func markDelivered(_ id: Int64) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            guard let row = try self.row(id) else { return }
            try delete.run([.integer(id)])
            try countDelivered.run([.text(row.entry.target)])
        }
    }

    /// Records a failed attempt of delivery `id` and makes it due again at `due`; `error`
    /// (already free of secrets) becomes the row's and the target's last error.
    func scheduleRetry(_ id: Int64, at due: Double, error: String, now: Double) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            guard let row = try self.row(id) else { return }
            try reschedule.run([.real(due), .text(error), .integer(id)])
            try noteError.run([.text(row.entry.target), .text(error), .real(now)])
        }
    }

    /// Moves delivery `id` to the dead letters after a last failed attempt, with `reason`,
    /// and deletes its target's oldest dead letters (by when they died) beyond `keeping`,
    /// counting them. Returns the row as it was and how many were deleted, or nil when it
    /// was no longer queued.
    @discardableResult
    func moveToDeadLetters(_ id: Int64, reason: String, at now: Double, keeping: Int = .max) throws(StoreError) -> (row: DeliveryRow, pruned: Int)? {
        try database.transaction { () throws(StoreError) -> (row: DeliveryRow, pruned: Int)? in
            guard let row = try self.row(id) else { return nil }
            try bury.run([.text(reason), .real(now), .integer(id)])
            try delete.run([.integer(id)])
            try noteError.run([.text(row.entry.target), .text(reason), .real(now)])
            guard keeping < .max else { return (row, 0) }
            return (row, try pruneDeadLetters(target: row.entry.target, keeping: keeping))
        }
    }

    /// Deletes the oldest dead letters of `target` (by when they died) beyond `keeping`,
    /// counting them; returns how many. Runs no transaction of its own.
    private func pruneDeadLetters(target: String, keeping: Int) throws(StoreError) -> Int {
        try prune.run([.text(target), .integer(Int64(keeping))])
        let pruned = database.changes
        if pruned > 0 { try countPruned.run([.text(target), .integer(Int64(pruned))]) }
        return pruned
    }

    /// `pruneDeadLetters` in a transaction of its own: at the start, for dead letters kept
    /// past a bound that came later (a database from before the bounds, or a
    /// `maximumDeadLetters` lowered since), which would otherwise stay until the target's
    /// next dead letter.
    func pruneDeadLettersInOwnTransaction(target: String, keeping: Int) throws(StoreError) -> Int {
        try database.transaction { () throws(StoreError) -> Int in try pruneDeadLetters(target: target, keeping: keeping) }
    }

    /// Puts the dead letters of `target` (of every target when nil) back in the queue, due
    /// at `now` with a fresh retry window and their old row ids, so each goes out before
    /// what its device queued later, whatever the target's bound (the operator asked for
    /// them; new deliveries are refused until the queue is back under it). Returns how many.
    func retryDeadLetters(target: String?, at now: Double) throws(StoreError) -> Int {
        try database.transaction { () throws(StoreError) -> Int in
            let filter = target == nil ? "" : " WHERE target = ?"
            let values: [Statement.Value] = target.map { [.text($0)] } ?? []
            var count = 0
            try database.prepare("SELECT COUNT(*) FROM delivery_dead\(filter)").query(values) { row in
                count = Int(row.integer(0))
            }
            try database.prepare("""
                INSERT OR IGNORE INTO delivery (id, target, device, event_id, payload, queued, due, attempts)
                SELECT id, target, device, event_id, payload, ?, ?, 0 FROM delivery_dead\(filter)
                """).run([.real(now), .real(now)] + values)
            try database.prepare("DELETE FROM delivery_dead\(filter)").run(values)
            return count
        }
    }

    /// Where each target's deliveries stand, by target name; every target that has
    /// anything queued, dead or delivered is listed.
    func counts() throws(StoreError) -> [DeliveryCounts] {
        var counts: [String: DeliveryCounts] = [:]
        func update(_ target: String, _ change: (inout DeliveryCounts) -> Void) {
            change(&counts[target, default: DeliveryCounts(target: target)])
        }
        try database.prepare("SELECT target, SUM(attempts = 0), SUM(attempts > 0) FROM delivery GROUP BY target").query { row in
            update(row.text(0)) {
                $0.pending = Int(row.integer(1))
                $0.retrying = Int(row.integer(2))
            }
        }
        try database.prepare("SELECT target, COUNT(*) FROM delivery_dead GROUP BY target").query { row in
            update(row.text(0)) { $0.dead = Int(row.integer(1)) }
        }
        try database.prepare("SELECT target, refused, pruned FROM delivery_bound WHERE refused > 0 OR pruned > 0").query { row in
            update(row.text(0)) {
                $0.refused = Int(row.integer(1))
                $0.pruned = Int(row.integer(2))
            }
        }
        try database.prepare("SELECT target, delivered, last_error, last_error_at FROM delivery_target").query { row in
            update(row.text(0)) {
                $0.delivered = Int(row.integer(1))
                $0.lastError = row.isNull(2) ? nil : row.text(2)
                $0.lastErrorAt = row.isNull(3) ? nil : row.real(3)
            }
        }
        return counts.values.sorted { $0.target < $1.target }
    }

    private static func deliveryRow(_ row: Row) -> DeliveryRow {
        DeliveryRow(
            id: row.integer(0),
            entry: DeliveryEntry(target: row.text(1), device: row.text(2), eventID: row.text(3), payload: row.blob(4)),
            queued: row.real(5), due: row.real(6), attempts: Int(row.integer(7)),
            lastError: row.isNull(8) ? nil : row.text(8))
    }
}
