#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive hold on a state directory for as long as the value lives: an `flock` on
/// `state.lock` in it. A bridge (`geotify run`) and `geotify state reshard` take it, so
/// two processes never use one state directory at once: two bridges in one directory
/// would give the same outbox ids to different messages and overwrite each other's
/// hand-over mark, so messages would be lost or published twice.
///
/// The lock goes with the process: a crash or `kill -9` releases it, so a restart never
/// finds a stale one (the file stays, empty, and is reused).
package final class StateDirectoryLock: Sendable {
    /// The lock file's name in the state directory.
    package static let fileName = "state.lock"
    /// The lock file.
    package let path: String
    private let descriptor: Int32

    /// Creates `directory` when needed (`StateDirectory.prepare`) and locks it; throws
    /// when another process (or another value in this one) holds it.
    package init(directory: String) throws(StoreError) {
        try StateDirectory.prepare(directory)
        let operation = "use state directory \(directory)"
        path = directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw StoreError(operation, "open \(path): \(String(cString: strerror(errno)))") }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let failure = errno
            close(descriptor)
            guard failure == EWOULDBLOCK else { throw StoreError(operation, "lock \(path): \(String(cString: strerror(failure)))") }
            throw StoreError(
                operation,
                "another geotify process is using it (it holds the lock on \(path)): a bridge, or `geotify state reshard`. Each instance needs a state directory of its own; stop the other process first")
        }
    }

    deinit {
        close(descriptor)
    }
}
