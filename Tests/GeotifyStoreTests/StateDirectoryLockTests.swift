import Foundation
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

    @Test func aMissingDirectoryIsMade() throws {
        let nested = directory.file("a/b")
        _ = try StateDirectoryLock(directory: nested)
        #expect(FileManager.default.fileExists(atPath: nested + "/state.lock"))
    }
}
