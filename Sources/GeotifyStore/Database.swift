import CSQLite

/// A thin, typed wrapper over one SQLite connection.
///
/// Only the few calls the state store needs: execute, prepared statements, and
/// transactions. A connection is used by one thread at a time; `StateStore` serialises
/// access to it.
final class Database {
    private let handle: OpaquePointer
    let path: String
    /// The statements run again and again (`statement(_:)`), each compiled once, by its
    /// text: the transaction's `BEGIN` and `COMMIT` (the lanes commit once a burst, and
    /// `execute` had SQLite parse them again at every one), the housekeeping tick's outbox
    /// pruning.
    private var kept: [String: Statement] = [:]

    init(path: String) throws(StoreError) {
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &connection, flags, nil)
        guard status == SQLITE_OK, let connection else {
            let reason = connection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_close(connection)
            throw StoreError("open \(path)", reason)
        }
        handle = connection
        self.path = path
        sqlite3_busy_timeout(handle, 5000)
    }

    /// A connection to the state database as the bridge's writers open it (the state
    /// store's, the delivery queue's): in WAL mode, syncing as `durability` asks (`FULL`
    /// syncs the log at every commit, so a commit survives power loss; `NORMAL` only at
    /// checkpoints). The setting is the connection's, so each must make it.
    static func state(at path: String, durability: StateStore.Durability) throws(StoreError) -> Database {
        let database = try Database(path: path)
        try database.execute("""
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = \(durability == .full ? "FULL" : "NORMAL");
            """)
        return database
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that return no rows.
    func execute(_ sql: String) throws(StoreError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        if status != SQLITE_OK {
            let reason = message.map { String(cString: $0) } ?? lastError
            sqlite3_free(message)
            throw StoreError("execute \(sql.prefix(60))", reason)
        }
    }

    /// The compiled statement for `sql`, compiled at its first use and kept for the
    /// connection's life: for statements run often, which SQLite then parses once.
    func statement(_ sql: String) throws(StoreError) -> Statement {
        if let statement = kept[sql] { return statement }
        let statement = try prepare(sql)
        kept[sql] = statement
        return statement
    }

    /// A compiled statement, reusable with `reset`.
    func prepare(_ sql: String) throws(StoreError) -> Statement {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK,
              let statement
        else { throw StoreError("prepare \(sql.prefix(60))", lastError) }
        return Statement(handle: statement, database: self)
    }

    /// Runs `body` in a transaction that is committed when it returns and rolled back
    /// when it throws.
    func transaction<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try statement("BEGIN IMMEDIATE").run([])
        do {
            let result = try body()
            try statement("COMMIT").run([])
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Calls `hook` after each commit with the number of pages in the write-ahead log;
    /// replaces SQLite's automatic checkpoint, which is such a hook (`LogCheckpointer`).
    func onLogWritten(
        context: UnsafeMutableRawPointer,
        _ hook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32
    ) {
        _ = sqlite3_wal_hook(handle, hook, context)
    }

    /// Copies as much of the write-ahead log into the database as it can without waiting
    /// for other connections (`SQLITE_CHECKPOINT_PASSIVE`); returns SQLite's result code,
    /// the pages in the log and how many of them are now in the database.
    func checkpointPassively() -> (status: Int32, log: Int32, copied: Int32) {
        Database.checkpointPassively(handle)
    }

    /// `checkpointPassively` on the connection `handle` (a hook's, which gets the
    /// connection as a handle).
    static func checkpointPassively(_ handle: OpaquePointer?) -> (status: Int32, log: Int32, copied: Int32) {
        var log: Int32 = 0
        var copied: Int32 = 0
        let status = sqlite3_wal_checkpoint_v2(handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        return (status, log, copied)
    }

    var lastError: String { String(cString: sqlite3_errmsg(handle)) }

    /// The rows the last completed INSERT, UPDATE or DELETE changed (not a trigger's).
    var changes: Int { Int(sqlite3_changes(handle)) }
}

/// One prepared statement of a `Database`.
final class Statement {
    private let handle: OpaquePointer
    private unowned let database: Database

    fileprivate init(handle: OpaquePointer, database: Database) {
        self.handle = handle
        self.database = database
    }

    deinit {
        sqlite3_finalize(handle)
    }

    /// A value SQLite can store.
    enum Value {
        case integer(Int64)
        case real(Double)
        case text(String)
        case blob([UInt8])
        case null
    }

    /// Binds `values` to the parameters in order, runs the statement to completion, and
    /// resets it for the next use.
    func run(_ values: [Value]) throws(StoreError) {
        try bind(values)
        defer { sqlite3_reset(handle) }
        let status = sqlite3_step(handle)
        guard status == SQLITE_DONE || status == SQLITE_ROW else {
            throw StoreError("write \(database.path)", database.lastError)
        }
    }

    /// Binds `values`, then calls `row` for each result row.
    func query(_ values: [Value] = [], row: (Row) throws(StoreError) -> Void) throws(StoreError) {
        try rows(values) { (current: Row) throws(StoreError) -> Bool in
            try row(current)
            return true
        }
    }

    /// Binds `values`, then calls `row` for each result row until it returns false.
    func rows(_ values: [Value] = [], while row: (Row) throws(StoreError) -> Bool) throws(StoreError) {
        try bind(values)
        defer { sqlite3_reset(handle) }
        while true {
            let status = sqlite3_step(handle)
            if status == SQLITE_DONE { return }
            guard status == SQLITE_ROW else { throw StoreError("read \(database.path)", database.lastError) }
            guard try row(Row(handle: handle)) else { return }
        }
    }

    private func bind(_ values: [Value]) throws(StoreError) {
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .integer(let number): status = sqlite3_bind_int64(handle, index, number)
            case .real(let number): status = sqlite3_bind_double(handle, index, number)
            case .text(let text):
                // The string's own bytes, lent (SQLite copies them): passing `text` as a C
                // string argument would copy it into a new array first.
                status = text.withCString { sqlite3_bind_text(handle, index, $0, -1, sqliteTransient) }
            case .blob(let bytes):
                status = bytes.withUnsafeBytes { raw in
                    sqlite3_bind_blob(handle, index, raw.baseAddress, Int32(raw.count), sqliteTransient)
                }
            case .null: status = sqlite3_bind_null(handle, index)
            }
            guard status == SQLITE_OK else { throw StoreError("bind \(database.path)", database.lastError) }
        }
    }
}

/// The current row of a query, read by column index.
struct Row {
    fileprivate let handle: OpaquePointer

    func isNull(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_NULL }
    /// Whether the value is an integer: SQLite makes a sum that overflows a real, which
    /// `integer` would clamp.
    func isInteger(_ column: Int32) -> Bool { sqlite3_column_type(handle, column) == SQLITE_INTEGER }
    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }
    func real(_ column: Int32) -> Double { sqlite3_column_double(handle, column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        return String(cString: pointer)
    }

    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let pointer = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }
}

/// SQLite's SQLITE_TRANSIENT destructor: copy the bound bytes before returning.
private let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
