import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// The real clock: `CLOCK_REALTIME` for `now`, `CLOCK_MONOTONIC` for `uptime`, and
/// Dispatch's monotonic timers for delayed work.
package struct SystemScheduler: Scheduler {
    package init() {}

    package var now: Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    package var uptime: Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    @discardableResult
    package func schedule(after delay: Double, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let handle = ScheduledWork()
        let nanoseconds = Int(max(0, min(delay, 1e9)) * 1e9)
        queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) {
            guard !handle.isCancelled else { return }
            work()
        }
        return handle
    }
}
