import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive hold on a state directory for as long as the value lives (or until
/// `release`): a bridge (`geotify run`) and `geotify state reshard` take it, so two
/// processes never use one state directory at once: two bridges in one directory would
/// give the same outbox ids to different messages and overwrite each other's hand-over
/// mark, so messages would be lost or published twice.
///
/// Between processes it is a POSIX record lock (`fcntl` `F_SETLK`) on `state.lock` in
/// the directory. Such a lock belongs to the process: a child it starts does not inherit
/// it (an `flock` is shared with every child forked before its `exec`, so a stop could
/// not give it back while the process was starting another program), and a crash or
/// `kill -9` releases it, so a restart never finds a stale one (the file stays, empty,
/// and is reused). Within one process, where a record lock does not exclude, the
/// directories held are kept in a set of their own.
package final class StateDirectoryLock: Sendable {
    /// The lock file's name in the state directory.
    package static let fileName = "state.lock"
    /// The lock file.
    package let path: String
    /// The directories this process holds, by real path: a record lock is the process's,
    /// so a second hold in the same process is refused here. A second descriptor of the
    /// file must not even be opened and closed, since closing any descriptor of a file
    /// gives up the process's record locks on it.
    private static let heldHere = Mutex<Set<String>>([])
    /// The real path of the directory, its key in `heldHere`.
    private let key: String
    /// The lock file's descriptor while the lock is held; -1 once released.
    private let descriptor: Mutex<Int32>

    /// Creates `directory` when needed (`StateDirectory.prepare`) and locks it; throws
    /// when another process, or another value in this one, holds it.
    package init(directory: String) throws(StoreError) {
        try StateDirectory.prepare(directory)
        let operation = "use state directory \(directory)"
        let path = directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName
        self.path = path
        guard let resolved = realpath(directory, nil) else {
            throw StoreError(operation, "resolve \(directory): \(String(cString: strerror(errno)))")
        }
        let key = String(cString: resolved)
        free(resolved)
        self.key = key
        let inUse = StoreError(
            operation,
            "another geotify process is using it (it holds the lock on \(path)): a bridge, or `geotify state reshard`. Each instance needs a state directory of its own; stop the other process first")
        guard Self.heldHere.withLock({ $0.insert(key).inserted }) else { throw inUse }
        let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard opened >= 0 else {
            let failure = errno
            Self.heldHere.withLock { _ = $0.remove(key) }
            throw StoreError(operation, "open \(path): \(String(cString: strerror(failure)))")
        }
        var region = flock()
        region.l_type = Int16(F_WRLCK)
        region.l_whence = Int16(SEEK_SET)
        guard fcntl(opened, F_SETLK, &region) == 0 else {
            let failure = errno
            close(opened)
            Self.heldHere.withLock { _ = $0.remove(key) }
            guard failure == EACCES || failure == EAGAIN else { throw StoreError(operation, "lock \(path): \(String(cString: strerror(failure)))") }
            throw inUse
        }
        descriptor = Mutex(opened)
    }

    /// Gives the directory back (closing the file releases the lock); once.
    package func release() {
        let released = descriptor.withLock { descriptor -> Bool in
            guard descriptor >= 0 else { return false }
            close(descriptor)
            descriptor = -1
            return true
        }
        if released { Self.heldHere.withLock { _ = $0.remove(key) } }
    }

    deinit {
        release()
    }
}
