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

    /// The numbers of the calls a thread waits in on this machine: futex(2), where a
    /// thread waiting for a lock (a `Mutex`, a semaphore) sleeps; nanosleep(2) and
    /// clock_nanosleep(2), where one sleeps for a time (SQLite's busy handler between its
    /// tries for a lock another connection holds); and poll(2) and ppoll(2), where one
    /// waits for a descriptor.
    private static var calls: (futex: Int, sleep: Set<Int>, poll: Set<Int>) {
        #if arch(x86_64)
        (202, [35, 230], [7, 271])
        #elseif arch(arm64)
        (98, [101, 115], [73])
        #else
        (-1, [], [])
        #endif
    }

    /// The number of the call the thread is blocked in (/proc/self/task/<id>/syscall
    /// begins with it; "running" when it runs), or nil.
    private var call: Int? {
        kernelFileText("/proc/self/task/\(id)/syscall")?.split(separator: " ").first.flatMap { Int($0) }
    }

    /// Whether the thread is asleep in futex(2), that is, waits for a lock or a condition.
    package var waitsInFutex: Bool { call == Self.calls.futex }

    /// Whether the thread sleeps for a time (nanosleep(2), clock_nanosleep(2)).
    package var sleeps: Bool { call.map(Self.calls.sleep.contains) ?? false }

    /// Whether the thread waits for a descriptor to be ready (poll(2), ppoll(2)).
    package var polls: Bool { call.map(Self.calls.poll.contains) ?? false }
}
