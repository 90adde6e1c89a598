import Dispatch
import Synchronization

/// A clock that moves only when told to, for tests: `advance(by:)` moves both `now` and
/// `uptime` and runs the work that became due, in order of due time (then of scheduling),
/// each on its queue, waiting for it to finish before the next. Work scheduled by work
/// that runs is itself run if it falls due within the same advance.
package final class ManualScheduler: Scheduler {
    private struct Pending {
        /// The uptime at which it was scheduled.
        var scheduled: Double
        var due: Double
        var sequence: Int
        var queue: DispatchQueue
        var handle: ScheduledWork
        var work: @Sendable () -> Void
    }

    private struct State {
        var now: Double
        var uptime: Double
        var pending: [Pending] = []
        var sequence = 0
    }

    private let state: Mutex<State>

    /// A clock whose wall time starts at `now` (seconds since 1970).
    package init(now: Double = 1_700_000_000) {
        state = Mutex(State(now: now, uptime: 0))
    }

    package var now: Double { state.withLock { $0.now } }
    package var uptime: Double { state.withLock { $0.uptime } }

    /// How many scheduled runs are waiting (not cancelled).
    package var pendingCount: Int {
        state.withLock { $0.pending.filter { !$0.handle.isCancelled }.count }
    }

    /// A run waiting on the clock: the uptime at which it was scheduled, and the one at
    /// which it falls due.
    package struct Waiting: Sendable, Equatable, CustomStringConvertible {
        package var scheduled: Double
        package var due: Double

        /// How long it was scheduled to wait.
        package var delay: Double { due - scheduled }

        package var description: String { "scheduled at \(scheduled) s, due at \(due) s" }
    }

    /// The scheduled runs waiting (not cancelled), in the order they will run. A run
    /// scheduled from another thread while `advance(by:)` moves the clock is timed from
    /// wherever the clock stood then, which may lie between where it was and where it is
    /// going: `scheduled` says where.
    package var waiting: [Waiting] {
        state.withLock { state in
            state.pending.filter { !$0.handle.isCancelled }
                .sorted { ($0.due, $0.sequence) < ($1.due, $1.sequence) }
                .map { Waiting(scheduled: $0.scheduled, due: $0.due) }
        }
    }

    /// How many scheduled runs the clock holds, cancelled ones included until a step of
    /// `advance` drops them.
    package var heldCount: Int {
        state.withLock { $0.pending.count }
    }

    @discardableResult
    package func schedule(after delay: Double, on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) -> ScheduledWork {
        let handle = ScheduledWork()
        state.withLock { state in
            state.sequence += 1
            state.pending.append(Pending(
                scheduled: state.uptime, due: state.uptime + max(0, delay), sequence: state.sequence, queue: queue,
                handle: handle, work: work))
        }
        return handle
    }

    /// Moves the clock forward by `seconds`, running every piece of work that falls due
    /// on the way at its due time. A negative step (or NaN) is a broken test: `uptime` is
    /// monotonic (`Scheduler`), and `now` and `uptime` moved back would make the runs due
    /// on the way run late, so it stops the test with a message, as any misuse of a
    /// precondition does, rather than moving the clock back or nowhere in silence.
    package func advance(by seconds: Double) {
        precondition(seconds >= 0, "ManualScheduler.advance(by: \(seconds)): the clock only moves forward (uptime is monotonic)")
        let target = state.withLock { $0.uptime } + seconds
        while let next = takeNext(dueBy: target) {
            if !next.handle.isCancelled {
                next.queue.sync { next.work() }
            }
        }
        state.withLock { state in
            state.now += target - state.uptime
            state.uptime = target
        }
    }

    /// Removes and returns the earliest work due by `target`, moving the clock to its
    /// due time. Cancelled work is dropped first: work that reschedules itself and
    /// cancels what it scheduled before (a delivery worker's wake-ups) would otherwise
    /// leave its cancelled runs to be scanned at every step until they fall due (a day
    /// of such a clock took minutes).
    private func takeNext(dueBy target: Double) -> Pending? {
        state.withLock { state in
            state.pending.removeAll { $0.handle.isCancelled }
            guard let index = state.pending.indices.min(by: { lhs, rhs in
                (state.pending[lhs].due, state.pending[lhs].sequence) < (state.pending[rhs].due, state.pending[rhs].sequence)
            }), state.pending[index].due <= target else { return nil }
            let next = state.pending.remove(at: index)
            if next.due > state.uptime {
                state.now += next.due - state.uptime
                state.uptime = next.due
            }
            return next
        }
    }
}
