import Foundation

/// The state database's files in the state directory (`state.sqlite` and SQLite's
/// `state.sqlite-wal` and `state.sqlite-shm`), checked before the bridge opens them and
/// set aside when an operator asks to start over.
///
/// Why a check of its own: opening a damaged database with SQLite, even only to find
/// that it is damaged, can change it (when the last connection closes SQLite merges the
/// write-ahead log into the database and deletes the log), which destroys what someone
/// investigating the damage needs; and SQLite takes an empty file for a new, empty
/// database, so a state file truncated to 0 bytes would silently start the bridge with
/// every device's state and the outbox gone. So `check(directory:)` only reads: the
/// database's header and size, the log's header, and then SQLite's `quick_check` run on
/// copies in a temporary directory. A refused start leaves every file as it was.
public enum StateFiles {
    /// The database's file name in the state directory.
    public static let databaseName = "state.sqlite"

    /// Checks the state files in `directory` without changing them, and throws a
    /// `StoreError` saying what is wrong and what to do when the bridge must not open
    /// them: an empty or truncated database, one that is not an SQLite database, a
    /// damaged write-ahead log or one without its database, or pages that
    /// `quick_check` finds damaged. No files at all is fine (a first start). Returns
    /// notes for the log when the check could not be complete (no room to copy the
    /// files for `quick_check`: the headers were still checked).
    public static func check(directory: String) throws(StoreError) -> [String] {
        let database = (directory as NSString).appendingPathComponent(databaseName)
        let log = database + "-wal"
        let operation = "check the state database \(database)"
        let reset = "start once with --reset-state to set the files aside (renamed, not deleted) and begin with empty state: every device's state and the outbox are lost"

        guard let size = try fileSize(database, operation: operation) else {
            if let logSize = try fileSize(log, operation: operation), logSize > 0 {
                throw StoreError(operation, "the database is missing but its write-ahead log \(log) is there (\(logSize) bytes): the database was deleted or moved. Put it back, or \(reset)")
            }
            return []
        }
        guard size > 0 else {
            throw StoreError(operation, "the file is empty (0 bytes), so it holds no state (it was truncated, or the very first start was interrupted). Restore it from a backup, or \(reset)")
        }
        let header = try read(database, count: 100, operation: operation)
        guard header.count == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else {
            throw StoreError(operation, "the file is not an SQLite database (\(size) bytes, beginning \(describe(header.prefix(16)))). Restore it from a backup, or \(reset)")
        }
        let rawPageSize = Int(header[16]) << 8 | Int(header[17])
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        guard pageSize >= 512, pageSize <= 65_536, pageSize & (pageSize - 1) == 0 else {
            throw StoreError(operation, "the database's header is damaged (page size \(rawPageSize)). Restore it from a backup, or \(reset)")
        }
        guard size % pageSize == 0 else {
            throw StoreError(operation, "the database is truncated or damaged: \(size) bytes is not a whole number of \(pageSize)-byte pages. Restore it from a backup, or \(reset)")
        }
        if let logSize = try fileSize(log, operation: operation), logSize > 0 {
            let logHeader = try read(log, count: 32, operation: operation)
            let magic = logHeader.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            guard logHeader.count == 32, magic == 0x377F_0682 || magic == 0x377F_0683 else {
                throw StoreError(operation, "its write-ahead log \(log) is damaged (\(logSize) bytes, beginning \(describe(logHeader.prefix(8)))): the changes it holds cannot be read. Restore both files from a backup, or \(reset)")
            }
        }
        return try quickCheck(database: database, log: log, operation: operation, reset: reset)
    }

    /// Moves the state files in `directory` aside, so the bridge starts with empty
    /// state (`--reset-state`): `state.sqlite` becomes `state-reset-<time>.sqlite`, and its
    /// `-wal` and `-shm` files follow with the same new name, so SQLite (`sqlite3`) still
    /// reads the set-aside database whole. `now` is seconds since 1970. Returns the new
    /// paths; nothing is deleted.
    public static func setAside(directory: String, now: Double) throws(StoreError) -> [String] {
        let stamp = timestamp(now)
        let database = (directory as NSString).appendingPathComponent(databaseName)
        let renamed = (directory as NSString).appendingPathComponent("state-reset-\(stamp).sqlite")
        var moved: [String] = []
        for suffix in ["", "-wal", "-shm"] {
            let from = database + suffix
            let to = renamed + suffix
            var info = stat()
            guard lstat(from, &info) == 0 else { continue }
            guard lstat(to, &info) != 0 else {
                throw StoreError("set aside \(from)", "\(to) exists already")
            }
            guard rename(from, to) == 0 else {
                throw StoreError("set aside \(from)", String(cString: strerror(errno)))
            }
            moved.append(to)
        }
        return moved
    }

    /// Runs `PRAGMA quick_check` on copies of the database and its log in a temporary
    /// directory, so nothing SQLite does on opening or closing touches the originals.
    private static func quickCheck(database: String, log: String, operation: String, reset: String) throws(StoreError) -> [String] {
        let scratch = NSTemporaryDirectory() + "geotify-state-check-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let copy = (scratch as NSString).appendingPathComponent(databaseName)
        do {
            try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: database, toPath: copy)
            if FileManager.default.fileExists(atPath: log) {
                try FileManager.default.copyItem(atPath: log, toPath: copy + "-wal")
            }
        } catch {
            return ["the state database's pages were not checked (no room for a copy to check in \(NSTemporaryDirectory()): \((error as NSError).localizedDescription)); its header is sound"]
        }
        var problems: [String] = []
        do {
            let checked = try Database(path: copy)
            try checked.prepare("PRAGMA quick_check(10)").query { row in problems.append(row.text(0)) }
        } catch {
            problems = [error.reason]
        }
        guard problems == ["ok"] else {
            throw StoreError(operation, "SQLite finds the database damaged (\(problems.joined(separator: "; "))). The files were left as they are; restore them from a backup, or \(reset)")
        }
        return []
    }

    /// The size of the file at `path` (through links), nil when there is none.
    private static func fileSize(_ path: String, operation: String) throws(StoreError) -> Int? {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ENOENT { return nil }
            throw StoreError(operation, "cannot look at \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw StoreError(operation, "\(path) is not a regular file")
        }
        return Int(info.st_size)
    }

    /// Up to `count` bytes from the start of `path`, opened read-only.
    private static func read(_ path: String, count: Int, operation: String) throws(StoreError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw StoreError(operation, "cannot read \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: count)
        let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, 0) }
        guard got >= 0 else { throw StoreError(operation, "cannot read \(path): \(String(cString: strerror(errno)))") }
        return Array(bytes.prefix(got))
    }

    /// Bytes as a message shows them: printable ASCII as text, the rest in hex.
    private static func describe<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        if !bytes.isEmpty, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            return "\"\(String(decoding: bytes, as: UTF8.self))\""
        }
        return bytes.map { String(format: "%02X", $0) }.joined(separator: " ")
    }

    /// `now` as 20261130T140000Z.
    private static func timestamp(_ now: Double) -> String {
        var seconds = time_t(now.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }
}
