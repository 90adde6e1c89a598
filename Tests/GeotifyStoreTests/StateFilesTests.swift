import Foundation
import GeotifyCore
import GeotifyStore
import Testing

/// The state files are checked without being changed: an empty, foreign, truncated or
/// damaged database, or a lost or damaged write-ahead log, is refused with what to do,
/// and every file is left byte for byte as it was; a sound one passes untouched.
@Suite("State files")
struct StateFilesTests {
    let directory = TemporaryDirectory()

    var database: String { directory.file(StateFiles.databaseName) }

    /// Every file in the directory with its bytes.
    func snapshot() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] = try Data(contentsOf: URL(fileURLWithPath: directory.file(name)))
        }
        return files
    }

    func refusal() -> StoreError? {
        do {
            _ = try StateFiles.check(directory: directory.path)
            return nil
        } catch {
            return error
        }
    }

    /// A database of 300 devices, with one more device and an outbox message still only
    /// in the write-ahead log, as a killed bridge leaves it: copied while the store is open.
    func crashedDatabase() throws {
        let live = TemporaryDirectory()
        let fix = Fix(device: "alice/phone", coordinate: Coordinate(latitude: 52.52, longitude: 13.405), accuracy: 5, timestamp: 1_700_000_000)
        do {
            let store = try StateStore(directory: live.path)
            try store.save(devices: (0..<300).map { ("device/\($0)", DeviceState(badge: $0, lastFix: nil, revision: 1, fences: []), false) }, outbox: [])
        }
        let store = try StateStore(directory: live.path)
        try store.save(
            devices: [("alice/phone", DeviceState(badge: 2, lastFix: fix, revision: 1, fences: []), true)],
            outbox: [OutboxMessage(topic: "geotify/event/alice/phone", payload: Array("{}".utf8), qos: 1, retain: false)])
        for suffix in ["", "-wal", "-shm"] {
            try FileManager.default.copyItem(atPath: live.file(StateFiles.databaseName) + suffix, toPath: database + suffix)
        }
        withExtendedLifetime(store) {}
    }

    @Test func noFilesIsAFirstStart() throws {
        #expect(try StateFiles.check(directory: directory.path) == [])
        #expect(try snapshot().isEmpty)
    }

    @Test func aSoundDatabaseWithItsLogPassesAndIsNotTouched() throws {
        try crashedDatabase()
        let before = try snapshot()
        #expect((before[StateFiles.databaseName + "-wal"]?.count ?? 0) > 0)
        #expect(try StateFiles.check(directory: directory.path) == [])
        #expect(try snapshot() == before)
        #expect(try StateStore(directory: directory.path).loadDevices()["alice/phone"]?.badge == 2)
    }

    @Test func anEmptyDatabaseIsRefused() throws {
        _ = directory.write("", to: StateFiles.databaseName)
        let error = refusal()
        #expect(error?.description == "check the state database \(database): the file is empty (0 bytes), so it holds no state (it was truncated, or the very first start was interrupted). Restore it from a backup, or start once with --reset-state to set the files aside (renamed, not deleted) and begin with empty state: every device's state and the outbox are lost")
        #expect(try snapshot() == [StateFiles.databaseName: Data()])
    }

    @Test func aFileThatIsNotADatabaseIsRefused() throws {
        _ = directory.write(String(repeating: "garbage ", count: 30), to: StateFiles.databaseName)
        let before = try snapshot()
        #expect(refusal()?.reason.hasPrefix(#"the file is not an SQLite database (240 bytes, beginning "garbage garbage ")"#) == true)
        #expect(try snapshot() == before)
    }

    @Test func aTruncatedDatabaseIsRefused() throws {
        try crashedDatabase()
        let truncated = try Data(contentsOf: URL(fileURLWithPath: database)).prefix(4096 + 100)
        try truncated.write(to: URL(fileURLWithPath: database))
        let before = try snapshot()
        #expect(refusal()?.reason == "the database is truncated or damaged: 4196 bytes is not a whole number of 4096-byte pages. Restore it from a backup, or start once with --reset-state to set the files aside (renamed, not deleted) and begin with empty state: every device's state and the outbox are lost")
        #expect(try snapshot() == before)
    }

    /// A header whose page size is not one SQLite writes (a power of two from 512 to
    /// 65 536) cannot say where the pages are.
    @Test func aDatabaseWhoseHeaderIsDamagedIsRefused() throws {
        try crashedDatabase()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: database))
        bytes.replaceSubrange(16..<18, with: [0x03, 0x00])
        try bytes.write(to: URL(fileURLWithPath: database))
        let before = try snapshot()
        #expect(refusal()?.reason == "the database's header is damaged (page size 768). Restore it from a backup, or start once with --reset-state to set the files aside (renamed, not deleted) and begin with empty state: every device's state and the outbox are lost")
        #expect(try snapshot() == before)
    }

    @Test func damagedPagesAreRefusedAndTheLogIsNotMergedOrDeleted() throws {
        try crashedDatabase()
        // Garbage over every page but the first: the pages the log holds newer copies of
        // are read from there, the others are damaged.
        var bytes = try Data(contentsOf: URL(fileURLWithPath: database))
        try #require(bytes.count >= 3 * 4096)
        bytes.replaceSubrange(4096..<bytes.count, with: Data(repeating: 0xA5, count: bytes.count - 4096))
        try bytes.write(to: URL(fileURLWithPath: database))
        let before = try snapshot()
        let error = refusal()
        #expect(error?.reason.hasPrefix("SQLite finds the database damaged (") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("The files were left as they are") == true)
        #expect(try snapshot() == before)
    }

    @Test func aLostDatabaseWithItsLogLeftIsRefused() throws {
        try crashedDatabase()
        try FileManager.default.removeItem(atPath: database)
        let before = try snapshot()
        #expect(refusal()?.reason.hasPrefix("the database is missing but its write-ahead log \(database)-wal is there (") == true)
        #expect(try snapshot() == before)
    }

    @Test func aDamagedLogIsRefused() throws {
        try crashedDatabase()
        var log = try Data(contentsOf: URL(fileURLWithPath: database + "-wal"))
        log.replaceSubrange(0..<8, with: Data(repeating: 0, count: 8))
        try log.write(to: URL(fileURLWithPath: database + "-wal"))
        let before = try snapshot()
        #expect(refusal()?.reason.hasPrefix("its write-ahead log \(database)-wal is damaged (") == true)
        #expect(try snapshot() == before)
    }

    @Test func settingAsideRenamesEveryFileAndAFreshStoreStartsEmpty() throws {
        try crashedDatabase()
        let before = try snapshot()
        // 2026-11-30 14:00:00 UTC.
        let moved = try StateFiles.setAside(directory: directory.path, now: 1_796_047_200)
        let base = directory.file("state-reset-20261130T140000Z.sqlite")
        #expect(moved == [base, base + "-wal", base + "-shm"])
        let after = try snapshot()
        #expect(after.count == 3)
        #expect(after["state-reset-20261130T140000Z.sqlite-wal"] == before[StateFiles.databaseName + "-wal"])
        #expect(try StateFiles.check(directory: directory.path) == [])
        #expect(try StateStore(directory: directory.path).loadDevices().isEmpty)
        #expect(throws: StoreError.self) { try StateFiles.setAside(directory: directory.path, now: 1_796_047_200) }
    }

    /// A write-ahead log of no bytes holds no changes: without its database it is still
    /// a first start, not a lost database.
    @Test func anEmptyLogWithoutItsDatabaseIsAFirstStart() throws {
        _ = directory.write("", to: StateFiles.databaseName + "-wal")
        #expect(try StateFiles.check(directory: directory.path) == [])
    }

    /// A database cut to a whole number of 512-byte blocks but not of its own pages
    /// (4 096 bytes) is refused as truncated: the page size is the database's own.
    @Test func aDatabaseCutInsideAPageAtABlockIsRefused() throws {
        try crashedDatabase()
        let truncated = try Data(contentsOf: URL(fileURLWithPath: database)).prefix(2 * 4096 + 512)
        try truncated.write(to: URL(fileURLWithPath: database))
        let before = try snapshot()
        #expect(refusal()?.reason.hasPrefix("the database is truncated or damaged: 8704 bytes is not a whole number of 4096-byte pages.") == true)
        #expect(try snapshot() == before)
    }
}
