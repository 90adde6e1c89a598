import Foundation

/// A thread of this process and what it waits for in the kernel, read from /proc: for a
/// test that must know another thread has reached a lock held elsewhere and waits there,
/// rather than guess how long that takes.
package struct ThreadInKernel: Sendable {
    /// The thread's id (as /proc/self/task names it).
    package let id: Int

    /// The calling thread (`/proc/thread-self` links to `<pid>/task/<tid>`).
    package static func current() throws -> ThreadInKernel {
        let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")
        guard let id = target.split(separator: "/").last.flatMap({ Int($0) }) else {
            throw TestSupportError("cannot read the thread's id from /proc/thread-self (\(target))")
        }
        return ThreadInKernel(id: id)
    }

    /// futex(2)'s number, the call a thread waiting for a lock (a `Mutex`, a semaphore)
    /// sleeps in.
    private static var futex: Int {
        #if arch(x86_64)
        202
        #elseif arch(arm64)
        98
        #else
        -1
        #endif
    }

    /// Whether the thread is asleep in futex(2), that is, waits for a lock or a condition
    /// (/proc/self/task/<id>/syscall begins with the number of the call it is blocked in).
    package var waitsInFutex: Bool {
        guard let text = kernelFileText("/proc/self/task/\(id)/syscall"),
              let number = text.split(separator: " ").first.flatMap({ Int($0) }) else { return false }
        return number == Self.futex
    }
}
