import Dispatch

/// Where the bridge's shell gets the time and runs delayed work: lane ticks, fence-file
/// polling, statistics, preview expiry, reconnect back-off, delivery retries.
///
/// It is injected everywhere time matters, so a test can replace the system's clock with
/// a `ManualScheduler` and advance it instead of sleeping.
package protocol Scheduler: Sendable {
    /// Wall-clock time in seconds since 1970: for timestamps that leave the process.
    var now: Double { get }
    /// Monotonic time in seconds from an arbitrary start: for timeouts and intervals,
    /// which must not jump when the wall clock is set.
    var uptime: Double { get }
    /// Runs `work` on `queue` once `delay` seconds (monotonic) have passed; the returned
    /// handle cancels it.
    @discardableResult
    func schedule(after delay: Double, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> ScheduledWork
}

extension Scheduler {
    /// Runs `work` on `queue` every `interval` seconds, the first time after one interval,
    /// until the returned handle is cancelled.
    @discardableResult
    package func repeating(every interval: Double, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let handle = ScheduledWork()
        scheduleRepeat(handle: handle, interval: interval, queue: queue, work)
        return handle
    }

    private func scheduleRepeat(handle: ScheduledWork, interval: Double, queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        let next = schedule(after: interval, on: queue) { [self] in
            guard !handle.isCancelled else { return }
            work()
            scheduleRepeat(handle: handle, interval: interval, queue: queue, work)
        }
        handle.chain(next)
    }
}
