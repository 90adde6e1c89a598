import Dispatch
import Foundation
import GeotifyCore
import GeotifyJSON
import Synchronization

/// The bridge's memory across restarts: each device's state, the revision at which
/// each fence appeared, and the outbox of decided messages not yet handed to the broker.
///
/// It is an SQLite database in WAL mode (`state.sqlite` in the state directory): a
/// crash in the middle of a write leaves the last committed transaction intact, and a
/// batch of device states is committed together with the messages it caused, so what
/// was decided and what must be published never disagree. With `.normal` durability a
/// commit survives the process being killed; `.full` also survives power loss, at the
/// cost of an fsync per commit.
///
/// How far the outbox was handed to the broker is kept beside it (`OutboxWatermark`,
/// one small write before each hand-over, no transaction). After a crash the rows past
/// that mark are published again, and none before it: nothing decided is lost while the
/// broker is away, and nothing handed over is repeated; a mark found damaged on opening
/// counts every row then in the outbox as handed over (`damagedMark`). Rows acknowledged by the broker
/// are deleted now and then (`pruneAcknowledged()`), not one by one.
public final class StateStore: Sendable {
    /// How hard a commit tries to reach the disk.
    public enum Durability: String, Sendable, CaseIterable {
        case normal
        case full
    }

    /// A message waiting in the outbox, with its row id.
    public struct PendingMessage: Sendable, Equatable {
        public var id: Int64
        public var message: OutboxMessage
    }

    private let database: Mutex<Connection>
    /// How far the outbox was handed over and acknowledged.
    public let watermark: OutboxWatermark
    /// The database file.
    public let path: String
    /// The hand-over mark as found damaged on opening (and written whole again), nil
    /// when it was sound or new.
    package let damagedMark: DamagedOutboxMark?

    /// Opens (creating when needed) the state database in `directory`. Its write-ahead
    /// log is copied back into the database on `checkpoints` (`LogCheckpointer`; a queue
    /// of its own unless a test passes one).
    public convenience init(directory: String, durability: Durability = .normal) throws(StoreError) {
        try self.init(directory: directory, durability: durability, checkpoints: nil)
    }

    package init(directory: String, durability: Durability, checkpoints: DispatchQueue?) throws(StoreError) {
        try StateDirectory.prepare(directory)
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw StoreError("open state directory \(directory)", "the directory is not writable")
        }
        path = (directory as NSString).appendingPathComponent("state.sqlite")
        watermark = try OutboxWatermark(
            path: (directory as NSString).appendingPathComponent("outbox.handed"), synchronous: durability == .full)
        let connection = try Connection(path: path, durability: durability, checkpoints: checkpoints)
        switch watermark.contents() {
        case .empty:
            try connection.adopt(handedThrough: 0)
            damagedMark = nil
        case .marks(let marks):
            try connection.adopt(handedThrough: marks.handed)
            damagedMark = nil
        case .damaged(let damage):
            // Which messages were handed over cannot be told: every one in the outbox is
            // taken as handed over, so none is published twice (those never handed over
            // are lost instead), and the mark is written whole again past the last.
            try connection.adopt(handedThrough: 0)
            let last = connection.nextMessage - 1
            let skipped = try connection.countMessages(after: 0, through: .max)
            try watermark.repair(OutboxWatermark.Marks(handed: last, acknowledged: last))
            damagedMark = DamagedOutboxMark(path: watermark.path, damage: damage, skipped: skipped, handedThrough: last)
        }
        database = Mutex(connection)
    }

    /// Every persisted device state, by device.
    public func loadDevices() throws(StoreError) -> [String: DeviceState] {
        try loadDevicesAndNames().states
    }

    /// Every persisted device state, by device, and the devices whose state was last
    /// saved while the fence file in force named them (`save`): what tells a device
    /// removed from the file while the bridge was stopped from one the file never named.
    /// A state saved before this was recorded (by an earlier version) counts as never
    /// named. One read of the table.
    package func loadDevicesAndNames() throws(StoreError) -> (states: [String: DeviceState], named: Set<String>) {
        try database.withLock { connection throws(StoreError) in try connection.loadDevices() }
    }

    /// Deletes the states of `forgetting`, then commits those of `devices` (a device in
    /// both keeps its new state), each with whether the fence file in force names the
    /// device (`loadDevicesAndNames`), appends `outbox`, queues `deliveries` (queued at `now`)
    /// for their targets, each within its target's bound in `bounds`, and records `notes`
    /// (numbers by key, read back with `note(_:)`: what a reshard keeps of its progress),
    /// in one transaction; returns the outbox row ids, in order. `then` runs with the new
    /// ids after the commit and before any other save can commit, so callers that queue
    /// the messages there queue every save's messages in row order; `refused` runs after
    /// it with the deliveries the bounds refused (none were queued; empty when all were).
    /// Both run with the store's lock held: they must not use the store (that would stop
    /// the process). `refusedBefore` (target → count) adds deliveries refused while no
    /// commit could be written (`DeliveryBound.hold`) to the targets' refused counts.
    @discardableResult
    package func save(
        devices: [(device: String, state: DeviceState, named: Bool)], forgetting: [String] = [], outbox: [OutboxMessage],
        deliveries: [DeliveryEntry] = [], bounds: [String: DeliveryBound] = [:], refusedBefore: [String: Int] = [:], now: Double = 0,
        recording notes: [String: Int64] = [:], then: ([Int64]) -> Void = { _ in }, refused: ([DeliveryRefusal]) -> Void = { _ in }
    ) throws(StoreError) -> [Int64] {
        try database.withLock { connection throws(StoreError) in
            let (ids, refusals) = try connection.save(
                devices: devices, forgetting: forgetting, outbox: outbox, deliveries: deliveries, bounds: bounds,
                refusedBefore: refusedBefore, now: now, notes: notes)
            then(ids)
            if !refusals.isEmpty { refused(refusals) }
            return ids
        }
    }

    /// The outbox messages never handed to the broker, oldest first; at most `limit`
    /// of them unless it is negative.
    public func pendingMessages(limit: Int = -1) throws(StoreError) -> [PendingMessage] {
        let handed = watermark.read().handed
        return try database.withLock { connection throws(StoreError) in try connection.pendingMessages(after: handed, limit: limit) }
    }

    /// How many outbox messages were never handed to the broker.
    package func pendingCount() throws(StoreError) -> Int {
        let handed = watermark.read().handed
        return try database.withLock { connection throws(StoreError) in try connection.countMessages(after: handed, through: .max) }
    }

    /// How many outbox messages have ids past `id`.
    package func countMessages(after id: Int64) throws(StoreError) -> Int {
        try database.withLock { connection throws(StoreError) in try connection.countMessages(after: id, through: .max) }
    }

    /// At most `limit` outbox messages with ids past `id`, oldest first; `then` runs with
    /// them before any other save can commit (see `save`).
    public func pendingMessages(after id: Int64, limit: Int, then: ([PendingMessage]) -> Void) throws(StoreError) {
        try database.withLock { connection throws(StoreError) in
            then(try connection.pendingMessages(after: id, limit: limit))
        }
    }

    /// How many outbox messages were handed to the broker before the last stop but not
    /// acknowledged: possibly lost, and not sent again (so none is repeated).
    public func unacknowledgedAtStop() throws(StoreError) -> Int {
        let marks = watermark.read()
        guard marks.handed > marks.acknowledged else { return 0 }
        return try database.withLock { connection throws(StoreError) in
            try connection.countMessages(after: marks.acknowledged, through: marks.handed)
        }
    }

    /// Deletes the outbox rows the broker acknowledged (they will never be sent again);
    /// rows handed over but not acknowledged stay until they are, so a stop can tell
    /// which were possibly lost.
    /// At most `limit` rows go at a time (the oldest), so that the lanes, which commit
    /// through the same connection, never wait long: deleting five seconds of outbox in one
    /// statement held them for 30-100 ms. Returns whether acknowledged rows are left.
    @discardableResult
    public func pruneAcknowledged(atMost limit: Int64 = .max) throws(StoreError) -> Bool {
        let acknowledged = watermark.read().acknowledged
        return try database.withLock { connection throws(StoreError) in try connection.prune(through: acknowledged, atMost: limit) }
    }

    /// Deletes the outbox messages with ids past `id` (those a reshard moved to another
    /// instance's outbox).
    package func dropMessages(after id: Int64) throws(StoreError) {
        try database.withLock { connection throws(StoreError) in try connection.dropMessages(after: id) }
    }

    /// The number recorded under `key` by a `save` (what a reshard keeps of its
    /// progress), nil when there is none.
    package func note(_ key: String) throws(StoreError) -> Int64? {
        try database.withLock { connection throws(StoreError) in
            var value: Int64?
            try connection.database.statement("SELECT value FROM meta WHERE key = ?").query([.text("note:" + key)]) { row in value = row.integer(0) }
            return value
        }
    }

    /// Deletes the number recorded under `key`.
    package func removeNote(_ key: String) throws(StoreError) {
        try database.withLock { connection throws(StoreError) in
            try connection.database.statement("DELETE FROM meta WHERE key = ?").run([.text("note:" + key)])
        }
    }

    /// A number that tells this store's database from every other's, made at its first
    /// use: kept in the database, so it follows the database, not its directory's name.
    package func identity() throws(StoreError) -> Int64 {
        try database.withLock { connection throws(StoreError) in
            try connection.database.transaction { () throws(StoreError) -> Int64 in
                var value: Int64?
                try connection.database.statement("SELECT value FROM meta WHERE key = 'identity'").query { row in value = row.integer(0) }
                if let value { return value }
                let made = Int64.random(in: 1...Int64.max)
                try connection.database.statement("INSERT INTO meta (key, value) VALUES ('identity', ?)").run([.integer(made)])
                return made
            }
        }
    }

    /// The persisted fence revisions (scope → identifier → revision; a scope is a device
    /// or a shared set, see `FenceBook.knownRevisions`) and the current book revision.
    public func loadRevisions() throws(StoreError) -> (known: [String: [String: Int]], current: Int) {
        try database.withLock { connection throws(StoreError) in try connection.loadRevisions() }
    }

    /// Replaces the persisted fence revisions with those of `book`.
    public func saveRevisions(of book: FenceBook) throws(StoreError) {
        try database.withLock { connection throws(StoreError) in try connection.saveRevisions(of: book) }
    }

    /// Saves the fence revisions of `book` where they differ from those of `previous`
    /// (whose revisions are saved already): a reload of a large file that changed a few
    /// fences writes those, not every fence, so the lanes' commits, which share the
    /// database, do not wait for it.
    public func saveRevisions(of book: FenceBook, since previous: FenceBook) throws(StoreError) {
        let now = book.knownRevisions
        let before = previous.knownRevisions
        let changed = Set(now.keys).union(before.keys).filter { now[$0] != before[$0] }
        try database.withLock { connection throws(StoreError) in
            try connection.saveRevisions(scopes: changed.sorted(), of: now, revision: book.revision)
        }
    }

    /// Replaces the persisted fence revisions of `devices` (and the book revision) with
    /// those of `book`: what a change to a few devices' fences needs, at their cost only.
    public func saveRevisions(of book: FenceBook, devices: [String]) throws(StoreError) {
        try database.withLock { connection throws(StoreError) in try connection.saveRevisions(of: book, devices: devices) }
    }
}

/// The SQLite connection and its prepared statements; only touched under the store's lock.
private final class Connection {
    let database: Database
    let upsertDevice: Statement
    let deleteDevice: Statement
    let insertBatch: Statement
    /// Reads the rows holding the messages past a mark (`pendingMessages`), often: a
    /// spilling publisher reads back as the broker acknowledges.
    let selectPending: Statement
    /// The id the next outbox message gets: past every id in the outbox and past the
    /// handed-over mark (`adopt`), so no id is ever given twice.
    var nextMessage: Int64 = 1
    /// The notifications queued for delivery to targets (`DeliveryLog`).
    let deliveryLog: DeliveryLog
    /// Copies the log back into the database off the committing thread; kept as long as
    /// `database`, whose commits call it.
    let checkpointer: LogCheckpointer

    init(path: String, durability: StateStore.Durability, checkpoints: DispatchQueue?) throws(StoreError) {
        database = try Database.state(at: path, durability: durability)
        try database.execute("""
            PRAGMA cache_size = -256;
            CREATE TABLE IF NOT EXISTS device (
                id TEXT PRIMARY KEY, badge INTEGER NOT NULL, revision INTEGER,
                lat REAL, lon REAL, acc REAL, tst REAL, fences TEXT NOT NULL, named INTEGER
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS fence_revision (
                device TEXT NOT NULL, fence TEXT NOT NULL, revision INTEGER NOT NULL,
                PRIMARY KEY (device, fence)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS outbox_batch (
                first INTEGER PRIMARY KEY, count INTEGER NOT NULL, messages BLOB NOT NULL
            );
            """)
        // An earlier version's table has no `named`: its rows get NULL, never named.
        var columns: Set<String> = []
        try database.prepare("SELECT name FROM pragma_table_info('device')").query { row in columns.insert(row.text(0)) }
        if !columns.contains("named") { try database.execute("ALTER TABLE device ADD COLUMN named INTEGER") }
        upsertDevice = try database.prepare(
            "INSERT OR REPLACE INTO device (id, badge, revision, lat, lon, acc, tst, fences, named) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        deleteDevice = try database.prepare("DELETE FROM device WHERE id = ?")
        insertBatch = try database.prepare("INSERT INTO outbox_batch (first, count, messages) VALUES (?, ?, ?)")
        selectPending = try database.prepare("""
            SELECT first, count, messages FROM outbox_batch WHERE first > ?1 AND first + count - 1 > ?2 ORDER BY first LIMIT ?3
            """)
        deliveryLog = try DeliveryLog(database: database)
        if let checkpoints {
            checkpointer = try LogCheckpointer(path: path, queue: checkpoints)
        } else {
            checkpointer = try LogCheckpointer(path: path)
        }
        checkpointer.watch(database)
    }

    /// Reconciles the outbox with the handed-over mark kept outside the database: the
    /// ids go on past the mark and past every stored message, so a database that lost
    /// its write-ahead log never reuses an id the mark already covers (the rows deleted
    /// by `prune` were all acknowledged, so at or before the mark). An earlier version's
    /// outbox, a row a message, becomes batches: rows it marked `sent` count as handed
    /// over, and its id sequence is carried over.
    func adopt(handedThrough handed: Int64) throws(StoreError) {
        var last = handed
        try database.transaction { () throws(StoreError) in
            var legacy = false
            try database.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'outbox'").query { _ in legacy = true }
            if legacy {
                try database.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'outbox'").query { row in last = max(last, row.integer(0)) }
                var rows: [(id: Int64, message: OutboxMessage)] = []
                try database.prepare("SELECT id, topic, payload, qos, retain FROM outbox WHERE sent = 0 ORDER BY id").query { row throws(StoreError) in
                    rows.append((row.integer(0), OutboxMessage(topic: row.text(1), payload: row.blob(2), qos: Int(row.integer(3)), retain: row.integer(4) != 0)))
                }
                var start = rows.startIndex
                while start < rows.endIndex {
                    var end = start + 1
                    // Ordered by id, so the next row runs on only if its id is one more
                    // (`&+`: a row at the largest id has no next one).
                    while end < rows.endIndex, end - start < OutboxBatch.capacity, rows[end].id == rows[end - 1].id &+ 1 { end += 1 }
                    try insertBatch.run([
                        .integer(rows[start].id), .integer(Int64(end - start)), .blob(OutboxBatch.encode(rows[start..<end].map(\.message)[...])),
                    ])
                    start = end
                }
                try database.execute("DROP TABLE outbox")
            }
            // A sum past the largest integer is a real in SQLite: a row whose ids run past it.
            try database.prepare("SELECT max(first + (count - 1)) FROM outbox_batch").query { row throws(StoreError) in
                guard !row.isNull(0) else { return }
                guard row.isInteger(0) else {
                    throw Connection.exhausted("a stored batch of messages has ids running past the largest (\(Int64.max))")
                }
                last = max(last, row.integer(0))
            }
        }
        // The mark and the rows are read back as untrusted: no arithmetic on them may trap.
        let (next, overflow) = last.addingReportingOverflow(1)
        guard !overflow else {
            throw last == handed
                ? Connection.exhausted("the hand-over mark in outbox.handed is at the largest id (\(last))", markToo: true)
                : Connection.exhausted("a stored batch of messages reaches the largest id (\(last))")
        }
        nextMessage = next
    }

    /// The error for an outbox whose ids leave none for the next message: damaged, since
    /// a bridge gives one id a message and would need millennia to use them all.
    /// `markToo`: the mark is damaged, and a database set aside would leave it behind.
    static func exhausted(_ reason: String, markToo: Bool = false) -> StoreError {
        StoreError(
            "open the outbox",
            "its ids are exhausted or damaged: \(reason), so no id is left for the next message. Restore the state directory from a backup, or \(markToo ? "delete outbox.handed and " : "")start once with --reset-state to set the state files aside and begin with empty state")
    }

    func loadDevices() throws(StoreError) -> (states: [String: DeviceState], named: Set<String>) {
        var devices: [String: DeviceState] = [:]
        var named: Set<String> = []
        let query = try database.prepare("SELECT id, badge, revision, lat, lon, acc, tst, fences, named FROM device")
        try query.query { row throws(StoreError) in
            let id = row.text(0)
            var state = DeviceState(badge: Int(row.integer(1)))
            state.revision = row.isNull(2) ? nil : Int(row.integer(2))
            if !row.isNull(3) {
                state.lastFix = Fix(
                    device: id,
                    coordinate: Coordinate(latitude: row.real(3), longitude: row.real(4)),
                    accuracy: row.isNull(5) ? nil : row.real(5),
                    timestamp: row.real(6))
            }
            state.fences = try Connection.decodeFences(row.text(7), device: id)
            devices[id] = state
            if !row.isNull(8) && row.integer(8) == 1 { named.insert(id) }
        }
        return (devices, named)
    }

    func save(
        devices: [(device: String, state: DeviceState, named: Bool)], forgetting: [String], outbox: [OutboxMessage],
        deliveries: [DeliveryEntry], bounds: [String: DeliveryBound], refusedBefore: [String: Int], now: Double, notes: [String: Int64]
    ) throws(StoreError) -> (ids: [Int64], refused: [DeliveryRefusal]) {
        let (afterLast, overflow) = nextMessage.addingReportingOverflow(Int64(outbox.count))
        guard !overflow else {
            throw StoreError("save state", "the outbox ids are exhausted: \(outbox.count) messages would pass the largest id (\(Int64.max))")
        }
        let saved = try database.transaction { () throws(StoreError) -> (ids: [Int64], refused: [DeliveryRefusal]) in
            for device in forgetting { try deleteDevice.run([.text(device)]) }
            for (key, value) in notes {
                try database.statement("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)").run([.text("note:" + key), .integer(value)])
            }
            if !refusedBefore.isEmpty { try deliveryLog.countRefusals(refusedBefore) }
            let refused = deliveries.isEmpty ? [] : try deliveryLog.enqueue(deliveries, at: now, bounds: bounds)
            for (device, state, named) in devices {
                let fix = state.lastFix
                try upsertDevice.run([
                    .text(device), .integer(Int64(state.badge)), state.revision.map { .integer(Int64($0)) } ?? .null,
                    fix.map { .real($0.coordinate.latitude) } ?? .null,
                    fix.map { .real($0.coordinate.longitude) } ?? .null,
                    fix?.accuracy.map { .real($0) } ?? .null,
                    fix.map { .real($0.timestamp) } ?? .null,
                    .text(Connection.encodeFences(state.fences)), .integer(named ? 1 : 0),
                ])
            }
            var start = outbox.startIndex
            while start < outbox.endIndex {
                let end = min(start + OutboxBatch.capacity, outbox.endIndex)
                try insertBatch.run([
                    .integer(nextMessage + Int64(start)), .integer(Int64(end - start)), .blob(OutboxBatch.encode(outbox[start..<end])),
                ])
                start = end
            }
            return (Array(nextMessage..<afterLast), refused)
        }
        nextMessage = afterLast
        return saved
    }

    /// At most `limit` messages (all when it is negative) with ids past `handed`, in id
    /// order. Each row read holds at least one of them, so `limit` rows are enough.
    func pendingMessages(after handed: Int64, limit: Int) throws(StoreError) -> [StateStore.PendingMessage] {
        var messages: [StateStore.PendingMessage] = []
        try selectPending.rows([.integer(Connection.firstBound(after: handed)), .integer(handed), .integer(Int64(limit))]) { row throws(StoreError) -> Bool in
            // The row is read back as untrusted: no arithmetic on what it says may trap.
            let first = row.integer(0)
            let count = Int(row.integer(1))
            let held = max(0, count)
            let (afterLast, overflow) = first.addingReportingOverflow(Int64(held))
            guard !overflow else {
                throw StoreError("read the outbox", "a stored batch of messages is damaged: its ids run past the largest")
            }
            // Made: the row's messages past `handed`, as many as `limit` still wants.
            let start = handed < first ? 0 : handed >= afterLast ? held : Int(handed - first) + 1
            let end = limit < 0 ? held : min(held, start + max(0, limit - messages.count))
            for (offset, message) in try OutboxBatch.decode(row.blob(2), count: count, keeping: start..<end).enumerated() {
                messages.append(StateStore.PendingMessage(id: first + Int64(start + offset), message: message))
            }
            return limit < 0 || messages.count < limit
        }
        return messages
    }

    /// Below the first id of every row that holds an id past `id`: rows hold at most
    /// `OutboxBatch.capacity` messages.
    static func firstBound(after id: Int64) -> Int64 {
        id > Int64.min + Int64(OutboxBatch.capacity) ? id - Int64(OutboxBatch.capacity) : Int64.min
    }

    /// How many messages have ids past `first` and up to `last`.
    func countMessages(after first: Int64, through last: Int64) throws(StoreError) -> Int {
        var count = 0
        try database.statement("""
            SELECT coalesce(sum(min(first + count - 1, ?3) - max(first, ?2 + 1) + 1), 0) FROM outbox_batch
            WHERE first > ?1 AND first <= ?3 AND first + count - 1 > ?2
            """).query([.integer(Connection.firstBound(after: first)), .integer(first), .integer(last)]) { row in count = Int(row.integer(0)) }
        return count
    }

    /// Deletes the rows whose messages are all at or before `handed`, about `limit`
    /// messages of them (the oldest; the oldest row whole even when it holds more);
    /// returns whether such rows are left.
    func prune(through handed: Int64, atMost limit: Int64) throws(StoreError) -> Bool {
        var oldest: (first: Int64, last: Int64)?
        try database.statement("SELECT first, first + count - 1 FROM outbox_batch ORDER BY first LIMIT 1").query { row in
            oldest = (row.integer(0), row.integer(1))
        }
        guard let oldest, oldest.last <= handed else { return false }
        // The ids `limit` messages from the oldest reach; past the largest is past `handed`.
        // (The row and the mark are read back as untrusted: no arithmetic may trap.)
        let (reach, overflow) = oldest.first.addingReportingOverflow(max(limit, 1) - 1)
        let through = overflow || reach >= handed ? handed : max(oldest.last, reach)
        try database.statement("DELETE FROM outbox_batch WHERE first <= ?1 AND first + count - 1 <= ?1").run([.integer(through)])
        return through < handed
    }

    /// Deletes the messages past `id`: whole rows, and the end of a row that holds `id`.
    func dropMessages(after id: Int64) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            var straddling: (first: Int64, messages: [OutboxMessage])?
            try database.prepare("SELECT first, count, messages FROM outbox_batch WHERE first > ?1 AND first <= ?2 AND first + count - 1 > ?2")
                .query([.integer(Connection.firstBound(after: id)), .integer(id)]) { row throws(StoreError) in
                    straddling = (row.integer(0), try OutboxBatch.decode(row.blob(2), count: Int(row.integer(1))))
                }
            try database.prepare("DELETE FROM outbox_batch WHERE first > ?").run([.integer(id)])
            if let (first, messages) = straddling {
                let kept = messages.prefix(Int(id - first + 1))
                try database.prepare("UPDATE outbox_batch SET count = ?, messages = ? WHERE first = ?")
                    .run([.integer(Int64(kept.count)), .blob(OutboxBatch.encode(kept)), .integer(first)])
            }
        }
    }

    func loadRevisions() throws(StoreError) -> (known: [String: [String: Int]], current: Int) {
        var known: [String: [String: Int]] = [:]
        try database.prepare("SELECT device, fence, revision FROM fence_revision").query { row throws(StoreError) in
            known[row.text(0), default: [:]][row.text(1)] = Int(row.integer(2))
        }
        var current = 0
        try database.prepare("SELECT value FROM meta WHERE key = 'revision'").query { row throws(StoreError) in
            current = Int(row.integer(0))
        }
        return (known, current)
    }

    func saveRevisions(of book: FenceBook) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            try database.execute("DELETE FROM fence_revision")
            let insert = try database.prepare("INSERT INTO fence_revision (device, fence, revision) VALUES (?, ?, ?)")
            for (scope, fences) in book.knownRevisions {
                for (fence, revision) in fences {
                    try insert.run([.text(scope), .text(fence), .integer(Int64(revision))])
                }
            }
            try database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('revision', ?)")
                .run([.integer(Int64(book.revision))])
        }
    }

    func saveRevisions(scopes: [String], of known: [String: [String: Int]], revision: Int) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            let delete = try database.prepare("DELETE FROM fence_revision WHERE device = ?")
            let insert = try database.prepare("INSERT INTO fence_revision (device, fence, revision) VALUES (?, ?, ?)")
            for scope in scopes {
                try delete.run([.text(scope)])
                for (fence, revision) in known[scope] ?? [:] {
                    try insert.run([.text(scope), .text(fence), .integer(Int64(revision))])
                }
            }
            try database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('revision', ?)")
                .run([.integer(Int64(revision))])
        }
    }

    func saveRevisions(of book: FenceBook, devices: [String]) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            let delete = try database.prepare("DELETE FROM fence_revision WHERE device = ?")
            let insert = try database.prepare("INSERT INTO fence_revision (device, fence, revision) VALUES (?, ?, ?)")
            for device in devices {
                try delete.run([.text(device)])
                for fence in book.fences(of: device) {
                    try insert.run([.text(device), .text(fence.identifier), .integer(Int64(fence.addedRevision))])
                }
            }
            try database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('revision', ?)")
                .run([.integer(Int64(book.revision))])
        }
    }

    /// The per-fence states as compact JSON: `[{"fence","inside","since","dwelled",
    /// "established","repeats","pending":{"inside","lat","lon","acc","tst"}}]`, leaving
    /// out defaults (a state saved before `repeats` was kept reads as none).
    static func encodeFences(_ fences: [FenceState]) -> String {
        JSONWriter().string(.array(fences.map { entry in
            var object = JSONObject()
            object["fence"] = .string(entry.fence)
            object["inside"] = .bool(entry.inside)
            object["since"] = .number(entry.since)
            if entry.dwelled { object["dwelled"] = .bool(true) }
            if !entry.established { object["established"] = .bool(false) }
            if entry.repeats > 0 { object["repeats"] = .number(Double(entry.repeats)) }
            if let pending = entry.pending {
                var change = JSONObject()
                change["inside"] = .bool(pending.inside)
                change["lat"] = .number(pending.coordinate.latitude)
                change["lon"] = .number(pending.coordinate.longitude)
                if let accuracy = pending.accuracy { change["acc"] = .number(accuracy) }
                change["tst"] = .number(pending.timestamp)
                object["pending"] = .object(change)
            }
            return .object(object)
        }))
    }

    static func decodeFences(_ text: String, device: String) throws(StoreError) -> [FenceState] {
        let corrupt = StoreError("read the state of device \(device)", "the stored fence states are not readable")
        guard let elements = (try? JSONParser().parse(text))?.arrayValue else { throw corrupt }
        var states: [FenceState] = []
        for element in elements {
            guard let fence = element["fence"]?.stringValue, let inside = element["inside"]?.boolValue,
                  let since = element["since"]?.numberValue
            else { throw corrupt }
            var pending: PendingChange?
            if let change = element["pending"] {
                guard let changeInside = change["inside"]?.boolValue, let latitude = change["lat"]?.numberValue,
                      let longitude = change["lon"]?.numberValue, let timestamp = change["tst"]?.numberValue
                else { throw corrupt }
                pending = PendingChange(
                    inside: changeInside, coordinate: Coordinate(latitude: latitude, longitude: longitude),
                    accuracy: change["acc"]?.numberValue, timestamp: timestamp)
            }
            var repeats: UInt32 = 0
            if let value = element["repeats"] {
                guard let count = value.numberValue.flatMap({ UInt32(exactly: $0) }) else { throw corrupt }
                repeats = count
            }
            states.append(FenceState(
                fence: fence, inside: inside, since: since, pending: pending, dwelled: element["dwelled"]?.boolValue ?? false,
                established: element["established"]?.boolValue ?? true, repeats: repeats))
        }
        return states
    }
}
