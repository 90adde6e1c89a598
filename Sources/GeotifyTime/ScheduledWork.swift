import Synchronization

/// A handle on work a `Scheduler` will run later: cancelling it keeps the work from
/// running if it has not started (work already running finishes).
package final class ScheduledWork: Sendable {
    private struct State {
        var cancelled = false
        /// The handle of the next run of a repeating schedule, cancelled with this one.
        var next: ScheduledWork?
    }

    private let state = Mutex(State())

    package init() {}

    /// Whether `cancel()` was called.
    package var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Keeps the work (and every later run of a repeating schedule) from running.
    package func cancel() {
        let next = state.withLock { state -> ScheduledWork? in
            state.cancelled = true
            return state.next
        }
        next?.cancel()
    }

    /// Makes `next` (the following run of a repeating schedule) part of this handle.
    func chain(_ next: ScheduledWork) {
        let cancelled = state.withLock { state -> Bool in
            state.next = next
            return state.cancelled
        }
        if cancelled { next.cancel() }
    }
}
