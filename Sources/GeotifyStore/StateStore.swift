import Foundation
import GeotifyCore
import GeotifyJSON
import Synchronization

/// The bridge's memory across restarts: each device's state, the revision at which
/// each fence appeared, and the outbox of decided but unacknowledged messages.
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

    /// Commits the states of `devices` and appends `outbox` in one transaction; returns
    /// the outbox row ids, in order.
    @discardableResult
    public func save(devices: [(device: String, state: DeviceState)], outbox: [OutboxMessage]) throws(StoreError) -> [Int64] {
        try database.withLock { connection throws(StoreError) in try connection.save(devices: devices, outbox: outbox) }
    }

    /// The messages still waiting for the broker's acknowledgement, oldest first.
    public func pendingMessages() throws(StoreError) -> [PendingMessage] {
        try database.withLock { connection throws(StoreError) in try connection.pendingMessages() }
    }

    /// Removes acknowledged messages from the outbox.
    public func removeMessages(_ ids: [Int64]) throws(StoreError) {
        guard !ids.isEmpty else { return }
        try database.withLock { connection throws(StoreError) in try connection.removeMessages(ids) }
    }

    /// The persisted fence revisions (device → identifier → revision) and the current
    /// book revision.
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

    init(path: String, durability: StateStore.Durability) throws(StoreError) {
        database = try Database(path: path)
        try database.execute("""
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL");
            CREATE TABLE IF NOT EXISTS device (
                id TEXT PRIMARY KEY, badge INTEGER NOT NULL, revision INTEGER,
                lat REAL, lon REAL, acc REAL, tst REAL, inside TEXT NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS fence_revision (
                device TEXT NOT NULL, fence TEXT NOT NULL, revision INTEGER NOT NULL,
                PRIMARY KEY (device, fence)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS outbox (
                id INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL, payload BLOB NOT NULL,
                qos INTEGER NOT NULL, retain INTEGER NOT NULL
            );
            """)
        upsertDevice = try database.prepare(
            "INSERT OR REPLACE INTO device (id, badge, revision, lat, lon, acc, tst, inside) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        insertMessage = try database.prepare("INSERT INTO outbox (topic, payload, qos, retain) VALUES (?, ?, ?, ?)")
        deleteMessage = try database.prepare("DELETE FROM outbox WHERE id = ?")
    }

    func loadDevices() throws(StoreError) -> [String: DeviceState] {
        var devices: [String: DeviceState] = [:]
        let query = try database.prepare("SELECT id, badge, revision, lat, lon, acc, tst, inside FROM device")
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
            state.inside = try Connection.decodeInside(row.text(7), device: id)
            devices[id] = state
        }
        return devices
    }

    func save(devices: [(device: String, state: DeviceState)], outbox: [OutboxMessage]) throws(StoreError) -> [Int64] {
        try database.transaction { () throws(StoreError) -> [Int64] in
            for (device, state) in devices {
                let fix = state.lastFix
                try upsertDevice.run([
                    .text(device), .integer(Int64(state.badge)), state.revision.map { .integer(Int64($0)) } ?? .null,
                    fix.map { .real($0.coordinate.latitude) } ?? .null,
                    fix.map { .real($0.coordinate.longitude) } ?? .null,
                    fix?.accuracy.map { .real($0) } ?? .null,
                    fix.map { .real($0.timestamp) } ?? .null,
                    .text(Connection.encodeInside(state.inside)),
                ])
            }
            var ids: [Int64] = []
            ids.reserveCapacity(outbox.count)
            for message in outbox {
                try insertMessage.run([
                    .text(message.topic), .blob(message.payload), .integer(Int64(message.qos)),
                    .integer(message.retain ? 1 : 0),
                ])
                ids.append(database.lastInsertedRow)
            }
            return ids
        }
    }

    func pendingMessages() throws(StoreError) -> [StateStore.PendingMessage] {
        var messages: [StateStore.PendingMessage] = []
        let query = try database.prepare("SELECT id, topic, payload, qos, retain FROM outbox ORDER BY id")
        try query.query { row throws(StoreError) in
            messages.append(StateStore.PendingMessage(
                id: row.integer(0),
                message: OutboxMessage(
                    topic: row.text(1), payload: row.blob(2), qos: Int(row.integer(3)), retain: row.integer(4) != 0)))
        }
        return messages
    }

    func removeMessages(_ ids: [Int64]) throws(StoreError) {
        try database.transaction { () throws(StoreError) in
            for id in ids { try deleteMessage.run([.integer(id)]) }
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
            for (device, fences) in book.devices {
                for fence in fences {
                    try insert.run([.text(device), .text(fence.identifier), .integer(Int64(fence.addedRevision))])
                }
            }
            try database.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('revision', ?)")
                .run([.integer(Int64(book.revision))])
        }
    }

    static func encodeInside(_ inside: [FenceState]) -> String {
        JSONWriter().string(.array(inside.map { ["fence": .string($0.fence), "since": .number($0.since)] }))
    }

    static func decodeInside(_ text: String, device: String) throws(StoreError) -> [FenceState] {
        let corrupt = StoreError("read the state of device \(device)", "the stored fence states are not readable")
        guard let elements = (try? JSONParser().parse(text))?.arrayValue else { throw corrupt }
        var states: [FenceState] = []
        for element in elements {
            guard let fence = element["fence"]?.stringValue, let since = element["since"]?.numberValue else { throw corrupt }
            states.append(FenceState(fence: fence, since: since))
        }
        return states
    }
}
