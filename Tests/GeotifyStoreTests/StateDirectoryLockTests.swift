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
    /// that stopped may), so a bridge started next in the same process gets it; it is
    /// released once: a second release (or the value's end) leaves the next holder's
    /// hold alone.
    @Test func aReleasedLockIsFreeWhileItsValueLives() throws {
        let first = try StateDirectoryLock(directory: directory.path)
        first.release()
        let second = try StateDirectoryLock(directory: directory.path)
        first.release()
        #expect(throws: StoreError.self, "released once: a second release leaves the next holder's hold alone") {
            try StateDirectoryLock(directory: directory.path)
        }
        withExtendedLifetime((first, second)) {}
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

    /// A second hold through another name of the same directory (a trailing slash, `.`,
    /// a link to it) is refused as well: the directory is held, not its name. (Taken, it
    /// would also give up the first hold when let go: closing any descriptor of the file
    /// ends the process's record lock.)
    @Test func aSecondHoldThroughAnotherNameOfTheDirectoryIsRefused() throws {
        let first = try StateDirectoryLock(directory: directory.path)
        let link = directory.file("link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: directory.path)
        for name in [directory.path + "/", directory.path + "/.", link] {
            let error = #expect(throws: StoreError.self, "\(name)") { try StateDirectoryLock(directory: name) }
            #expect(error?.reason.contains("another geotify process is using it") == true, "\(name)")
        }
        withExtendedLifetime(first) {}
    }

    /// The hold is exclusive between processes: while it is held, another process cannot
    /// take even a shared lock on the file, so two bridges never hold one directory.
    @Test func anotherProcessCannotShareTheHold() throws {
        let lock = try StateDirectoryLock(directory: directory.path)
        let printed = directory.file("try.out")
        let child = try ChildProcess(
            executable: "/usr/bin/python3",
            arguments: [
                "-c",
                "import fcntl, sys\nf = open(sys.argv[1], 'r')\ntry:\n    fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB)\n    print('taken')\nexcept OSError:\n    print('refused')",
                lock.path,
            ],
            outputFile: URL(fileURLWithPath: printed))
        #expect(child.waitForExit())
        #expect(try String(contentsOfFile: printed, encoding: .utf8) == "refused\n")
        withExtendedLifetime(lock) {}
    }

    /// The state directory, and each parent made for it, is for its owner alone (0700):
    /// it holds every device's positions.
    @Test func aMissingDirectoryIsMadeForItsOwnerAlone() throws {
        let nested = directory.file("a/b")
        _ = try StateDirectoryLock(directory: nested)
        for path in [directory.file("a"), nested] {
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700, "\(path): \(String(info.st_mode & 0o777, radix: 8))")
        }
    }

    /// A file where the state directory should be is refused, saying so, by the lock and
    /// by the store.
    @Test func aFileInPlaceOfTheDirectoryIsRefused() throws {
        let file = directory.write("not a directory", to: "state")
        for attempt in [{ _ = try StateDirectoryLock(directory: file) }, { _ = try StateStore(directory: file) }] as [() throws -> Void] {
            do {
                try attempt()
                Issue.record("a file was taken for the state directory")
            } catch let error as StoreError {
                #expect(error.operation == "use state directory \(file)")
                #expect(error.reason == "it exists and is not a directory")
            }
        }
    }
}
