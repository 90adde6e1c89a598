import Foundation

/// Who waits for a `flock`, read from /proc/locks, where a blocked request is listed
/// under the lock it waits for as `N: -> FLOCK ADVISORY WRITE <pid> <maj>:<min>:<inode> ...`:
/// for a test that must know a thread or a process has reached a lock held elsewhere and
/// waits there. The file's format is the kernel's interface, unlike the name of the
/// function a waiting thread sleeps in (`wchan`), which changes between kernels.
package enum FileLockWaiters {
    /// Whether process `pid` (a thread of it) waits for a `flock` on the file or
    /// directory whose inode is `inode`.
    package static func contains(pid: Int32, inode: UInt64) -> Bool {
        guard let locks = kernelFileText("/proc/locks") else { return false }
        return locks.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 6 && fields[1] == "->" && fields[2] == "FLOCK" && fields[5] == Substring(String(pid))
                && fields[6].split(separator: ":").last == Substring(String(inode))
        }
    }

    /// The inode of `path`, for `contains`.
    package static func inode(of path: String) throws -> UInt64 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw TestSupportError("cannot stat \(path): \(String(cString: strerror(errno)))") }
        return UInt64(info.st_ino)
    }
}
