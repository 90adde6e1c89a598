import Foundation
import GeotifyCore
import GeotifyJSON
import Synchronization

/// The bridge's memory across restarts: each device's state, the revision at which
/// each fence appeared, and the outbox of decided but unacknowledged messages.
///
/// Each outbox row says whether it was handed to a connected broker (`sent`). After a
/// crash, unsent rows are published again (nothing decided is lost while the broker is
/// away), while sent ones are dropped: they were almost certainly delivered, and
/// sending them again would repeat a notification.
///
/// It is an SQLite database in WAL mode (`state.sqlite` in the state directory): a
/// crash in the middle of a write leaves the last committed transaction intact, and a
/// batch of device states is committed together with the messages it caused, so what
/// was decided and what must be published never disagree. With `.normal` durability a
/// commit survives the process being killed; `.full` also survives power loss, at the
/// cost of an fsync per commit.
public final class StateStore: Sendable {
    /// How hard a commit tries to reach the disk.
    public enum Durability: String, Sendable, CaseIterable {
        case normal
        case full
    }

    /// A message waiting in the outbox, with its row id for removal.
    public struct PendingMessage: Sendable, Equatable {
        public var id: Int64
        public var message: OutboxMessage
    }

    private let database: Mutex<Connection>
    /// The database file.
    public let path: String

    /// Opens (creating when needed) the state database in `directory`.
    public init(directory: String, durability: Durability = .normal) throws(StoreError) {
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError("create state directory \(directory)", (error as NSError).localizedDescription)
        }
        guard FileManager.default.isWritableFile(atPath: directory) else {
            throw StoreError("open state directory \(directory)", "the directory is not writable")
        }
        path = (directory as NSString).appendingPathComponent("state.sqlite")
        database = Mutex(try Connection(path: path, durability: durability))
    }

    /// Every persisted device state, by device.
    public func loadDevices() throws(StoreError) -> [String: DeviceState] {
        try database.withLock { connection throws(StoreError) in try connection.loadDevices() }
    }

    /// Commits the states of `devices` and appends `outbox` in one transaction (as
    /// `sent` when told so, which only tests need); returns the outbox row ids, in order.
    @discardableResult
    public func save(devices: [(device: String, state: DeviceState)], outbox: [OutboxMessage], sent: Bool = false) throws(StoreError) -> [Int64] {
        try database.withLock { connection throws(StoreError) in try connection.save(devices: devices, outbox: outbox, sent: sent) }
    }

    /// The outbox messages never handed to a connected broker, oldest first.
    public func pendingMessages() throws(StoreError) -> [PendingMessage] {
        try database.withLock { connection throws(StoreError) in try connection.pendingMessages() }
    }

    /// In one transaction: removes acknowledged outbox rows, marks rows that may not
    /// have reached the broker as unsent (a crash publishes them again at the next
    /// start), and marks rows about to be handed to the broker as sent (a crash does not).
    public func updateOutbox(removing acknowledged: [Int64], unsent: [Int64], sent: [Int64]) throws(StoreError) {
        guard !acknowledged.isEmpty || !unsent.isEmpty || !sent.isEmpty else { return }
        try database.withLock { connection throws(StoreError) in
            try connection.updateOutbox(removing: acknowledged, unsent: unsent, sent: sent)
        }
    }

    /// Removes the rows that were handed to the broker but not acknowledged before the
    /// last stop, returning how many there were.
    public func discardSentMessages() throws(StoreError) -> Int {
        try database.withLock { connection throws(StoreError) in try connection.discardSentMessages() }
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
}

/// The SQLite connection and its prepared statements; only touched under the store's lock.
private final class Connection {
    let database: Database
    let upsertDevice: Statement
    let insertMessage: Statement
    let deleteMessage: Statement
    let unsendMessage: Statement
    let sendMessage: Statement

    init(path: String, durability: StateStore.Durability) throws(StoreError) {
        database = try Database(path: path)
        try database.execute("""
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL");
            CREATE TABLE IF NOT EXISTS device (
                id TEXT PRIMARY KEY, badge INTEGER NOT NULL, revision INTEGER,
                lat REAL, lon REAL, acc REAL, tst REAL, fences TEXT NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS fence_revision (
                device TEXT NOT NULL, fence TEXT NOT NULL, revision INTEGER NOT NULL,
                PRIMARY KEY (device, fence)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS outbox (
                id INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL, payload BLOB NOT NULL,
                qos INTEGER NOT NULL, retain INTEGER NOT NULL, sent INTEGER NOT NULL DEFAULT 0
            );
            """)
        upsertDevice = try database.prepare(
            "INSERT OR REPLACE INTO device (id, badge, revision, lat, lon, acc, tst, fences) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        insertMessage = try database.prepare("INSERT INTO outbox (topic, payload, qos, retain, sent) VALUES (?, ?, ?, ?, ?)")
        deleteMessage = try database.prepare("DELETE FROM outbox WHERE id = ?")
        unsendMessage = try database.prepare("UPDATE outbox SET sent = 0 WHERE id = ?")
        sendMessage = try database.prepare("UPDATE outbox SET sent = 1 WHERE id = ?")
    }

    func loadDevices() throws(StoreError) -> [String: DeviceState] {
        var devices: [String: DeviceState] = [:]
        let query = try database.prepare("SELECT id, badge, revision, lat, lon, acc, tst, fences FROM device")
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
        }
        return devices
    }

    func save(devices: [(device: String, state: DeviceState)], outbox: [OutboxMessage], sent: Bool) throws(StoreError) -> [Int64] {
        try database.transaction { () throws(StoreError) -> [Int64] in
            for (device, state) in devices {
                let fix = state.lastFix
                try upsertDevice.run([
                    .text(device), .integer(Int64(state.badge)), state.revision.map { .integer(Int64($0)) } ?? .null,
                    fix.map { .real($0.coordinate.latitude) } ?? .null,
                    fix.map { .real($0.coordinate.longitude) } ?? .null,
                    fix?.accuracy.map { .real($0) } ?? .null,
                    fix.map { .real($0.timestamp) } ?? .null,
                    .text(Connection.encodeFences(state.fences)),
                ])
            }
            var ids: [Int64] = []
            ids.reserveCapacity(outbox.count)
            for message in outbox {
                try insertMessage.run([
                    .text(message.topic), .blob(message.payload), .integer(Int64(message.qos)),
                    .integer(message.retain ? 1 : 0), .integer(sent ? 1 : 0),
                ])
                ids.append(database.lastInsertedRow)
            }
            return ids
        }
    }

    func pendingMessages() throws(StoreError) -> [StateStore.PendingMessage] {
        var messages: [StateStore.PendingMessage] = []
        let query = try database.prepare("SELECT id, topic, payload, qos, retain FROM outbox WHERE sent = 0 ORDER BY id")
        try query.query { row throws(StoreError) in
            messages.append(StateStore.PendingMessage(
                id: row.integer(0),
                message: OutboxMessage(
                    topic: row.text(1), payload: row.blob(2), qos: Int(row.integer(3)), retain: row.integer(4) != 0)))
        }
        return messages
    }


    func updateOutbox(removing acknowledged: [Int64], unsent: [Int64], sent: [Int64]) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            for id in acknowledged { try deleteMessage.run([.integer(id)]) }
            for id in unsent { try unsendMessage.run([.integer(id)]) }
            for id in sent { try sendMessage.run([.integer(id)]) }
        }
    }

    func discardSentMessages() throws(StoreError) -> Int {
        var count = 0
        try database.prepare("SELECT count(*) FROM outbox WHERE sent = 1").query { row in count = Int(row.integer(0)) }
        try database.execute("DELETE FROM outbox WHERE sent = 1")
        return count
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

    /// The per-fence states as compact JSON: `[{"fence","inside","since","dwelled",
    /// "established","pending":{"inside","lat","lon","acc","tst"}}]`, leaving out defaults.
    static func encodeFences(_ fences: [FenceState]) -> String {
        JSONWriter().string(.array(fences.map { entry in
            var object = JSONObject()
            object["fence"] = .string(entry.fence)
            object["inside"] = .bool(entry.inside)
            object["since"] = .number(entry.since)
            if entry.dwelled { object["dwelled"] = .bool(true) }
            if !entry.established { object["established"] = .bool(false) }
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
            states.append(FenceState(
                fence: fence, inside: inside, since: since, pending: pending, dwelled: element["dwelled"]?.boolValue ?? false,
                established: element["established"]?.boolValue ?? true))
        }
        return states
    }
}
