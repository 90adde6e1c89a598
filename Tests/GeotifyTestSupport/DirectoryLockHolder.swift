import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Another writer of a fence directory, for tests of what a change reads and writes
/// while it waits: holds the lock the directory's writers take (a `flock` on its
/// `devices/` directory) until `release`, and says when a thread of this process waits
/// for it.
package final class DirectoryLockHolder {
    private let descriptor: Int32
    private let inode: UInt64
    private var held = true

    /// Takes the lock of the fence directory `root` (whose `devices/` must exist).
    package init(fenceDirectory root: String) throws {
        descriptor = open(root + "/devices", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        var info = stat()
        guard descriptor >= 0, fstat(descriptor, &info) == 0, flock(descriptor, LOCK_EX) == 0 else {
            let reason = String(cString: strerror(errno))
            if descriptor >= 0 { close(descriptor) }
            throw TestSupportError("cannot lock \(root)/devices: \(reason)")
        }
        inode = UInt64(info.st_ino)
    }

    deinit {
        release()
        close(descriptor)
    }

    /// Whether a thread of this process waits for the lock (`FileLockWaiters`).
    package var hasWaiter: Bool {
        FileLockWaiters.contains(pid: getpid(), inode: inode)
    }

    /// Lets go of the lock (once).
    package func release() {
        guard held else { return }
        held = false
        flock(descriptor, LOCK_UN)
    }
}
