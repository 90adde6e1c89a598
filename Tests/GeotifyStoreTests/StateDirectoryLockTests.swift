import Foundation
import GeotifyTestSupport
import Testing
@testable import GeotifyStore

/// One process at a time uses a state directory: a second hold is refused, with the
/// directory and the lock file named, until the first is let go.
@Suite("State directory lock")
struct StateDirectoryLockTests {
    let directory = TemporaryDirectory()

    @Test func aSecondHoldIsRefusedUntilTheFirstGoes() throws {
        do {
            let first = try StateDirectoryLock(directory: directory.path)
            let error = #expect(throws: StoreError.self) { try StateDirectoryLock(directory: directory.path) }
            #expect(error?.operation == "use state directory \(directory.path)")
            #expect(error?.reason.contains("another geotify process is using it (it holds the lock on \(directory.file("state.lock")))") == true)
            withExtendedLifetime(first) {}
        }
        #expect(throws: Never.self) { try StateDirectoryLock(directory: directory.path) }
    }

    /// A stop releases the lock whoever still holds the value (a callback of the bridge
    /// that stopped may), so a bridge started next in the same process gets it.
    @Test func aReleasedLockIsFreeWhileItsValueLives() throws {
        let first = try StateDirectoryLock(directory: directory.path)
        first.release()
        #expect(throws: Never.self) { try StateDirectoryLock(directory: directory.path) }
        first.release()
        withExtendedLifetime(first) {}
    }

    /// Another process's lock on the file refuses the hold: the lock is the system's
    /// record lock on `state.lock`, which every geotify process takes (here a Python
    /// process's `lockf`, the same lock).
    @Test func anotherProcesssLockIsRefused() throws {
        try FileManager.default.createDirectory(atPath: directory.path, withIntermediateDirectories: true)
        let input = Pipe()
        let printed = directory.file("holder.out")
        let holder = try ChildProcess(
            executable: "/usr/bin/python3",
            arguments: ["-c", "import fcntl, sys; f = open(sys.argv[1], 'a'); fcntl.lockf(f, fcntl.LOCK_EX); print('held', flush=True); sys.stdin.read()", directory.file("state.lock")],
            outputFile: URL(fileURLWithPath: printed), standardInput: input.fileHandleForReading.fileDescriptor)
        defer {
            try? input.fileHandleForWriting.close()
            _ = holder.waitForExit()
        }
        // Printed once the lock is taken.
        #expect(waitUntil { (try? String(contentsOfFile: printed, encoding: .utf8))?.hasPrefix("held") == true })
        let error = #expect(throws: StoreError.self) { try StateDirectoryLock(directory: directory.path) }
        #expect(error?.reason.contains("another geotify process is using it") == true)
        try input.fileHandleForWriting.close()
        #expect(holder.waitForExit())
        #expect(throws: Never.self) { try StateDirectoryLock(directory: directory.path) }
    }

    @Test func aMissingDirectoryIsMade() throws {
        let nested = directory.file("a/b")
        _ = try StateDirectoryLock(directory: nested)
        #expect(FileManager.default.fileExists(atPath: nested + "/state.lock"))
    }
}
