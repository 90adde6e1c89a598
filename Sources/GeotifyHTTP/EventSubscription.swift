import Synchronization

/// One client's place in an `EventStream`: the bytes waiting to be sent to it, bounded so
/// a client that stops reading is closed (and reconnects for a fresh start) instead of
/// holding memory without limit: what is pending is dropped then, and the stream ends.
///
/// The opening (what the client starts from, `open(_:holding:)`: the whole state of a
/// large fence book may be more than the bound) does not count against the bound while
/// it waits; what follows it may add up to `maximumPending` more. What bounds the
/// openings is the lease the opening may carry (the application's count of its large
/// answers unsent), let go once the opening has been taken whole, or the stream closed.
///
/// The server pulls bytes with `take(maximum:)` on its own thread; when there are none it
/// parks the connection and registers `wake`, which the next `send` or `close` calls
/// (once) from whatever thread publishes.
package final class EventSubscription: Sendable {
    /// What `take(maximum:)` found.
    package enum Taken: Sendable, Equatable {
        case bytes([UInt8])
        /// Nothing yet: the caller parks the connection until woken.
        case nothing
        /// The stream ended: the caller ends the response.
        case end
    }

    private struct State {
        /// The bytes queued, of which those from `sent` on wait to be sent: taking moves
        /// `sent` rather than the bytes behind it (an opening of many megabytes is taken
        /// a few kilobytes at a time), and the sent bytes are dropped once they are at
        /// least half of the array, so each byte is moved at most about once.
        var pending: [UInt8] = []
        var sent = 0
        /// How many of the waiting bytes are the opening's, not counted against the bound.
        var opening = 0
        var closed = false
        var wake: (@Sendable () -> Void)?
        /// Held while the opening is not taken whole (`open(_:holding:)`).
        var lease: (any AnyObject & Sendable)?

        /// How many bytes wait to be sent.
        var waiting: Int { pending.count - sent }
    }

    /// The most bytes that may wait for one client before it is closed.
    package let maximumPending: Int
    private let state = Mutex(State())
    private let onClose: @Sendable (EventSubscription) -> Void
    private let onOverflow: @Sendable () -> Void

    init(
        first: [UInt8], maximumPending: Int, onClose: @escaping @Sendable (EventSubscription) -> Void,
        onOverflow: @escaping @Sendable () -> Void = {}
    ) {
        self.maximumPending = maximumPending
        self.onClose = onClose
        self.onOverflow = onOverflow
        state.withLock { $0.pending = first }
    }

    /// Queues the opening, the document the client starts from, whatever its size: it
    /// does not count against `maximumPending`. `lease` is kept until the opening has
    /// been taken whole (or the subscription closed), then let go. Says whether the
    /// subscription is open.
    @discardableResult
    package func open(_ bytes: [UInt8], holding lease: (any AnyObject & Sendable)? = nil) -> Bool {
        enqueue(bytes, opening: true, lease: lease)
    }

    /// Queues `bytes`; closes the subscription when that would exceed `maximumPending`.
    /// Says whether the subscription is still open.
    @discardableResult
    package func send(_ bytes: [UInt8]) -> Bool {
        enqueue(bytes, opening: false)
    }

    private func enqueue(_ bytes: [UInt8], opening: Bool, lease: (any AnyObject & Sendable)? = nil) -> Bool {
        // Let go of outside the lock (a lease's deinit takes its owner's lock).
        var dropped: (pending: [UInt8], lease: (any AnyObject & Sendable)?) = ([], lease)
        let (open, overflowed, wake) = state.withLock { state -> (Bool, Bool, (@Sendable () -> Void)?) in
            guard !state.closed else { return (false, false, nil) }
            var overflowed = false
            if opening {
                state.pending += bytes
                state.opening += bytes.count
                if state.opening > 0, let lease = dropped.lease {
                    state.lease = lease
                    dropped.lease = nil
                }
            } else if state.waiting - state.opening + bytes.count > maximumPending {
                // Too far behind: what waits is dropped now, not kept until the
                // connection times out.
                state.closed = true
                overflowed = true
                dropped = (state.pending, state.lease)
                state.pending = []
                state.sent = 0
                state.opening = 0
                state.lease = nil
            } else {
                state.pending += bytes
            }
            defer { state.wake = nil }
            return (!state.closed, overflowed, state.wake)
        }
        dropped = ([], nil)
        wake?()
        if overflowed { onOverflow() }
        if !open { onClose(self) }
        return open
    }

    /// Ends the stream once what is pending has been sent.
    package func close() {
        let (wasOpen, wake, lease) = state.withLock { state -> (Bool, (@Sendable () -> Void)?, (any AnyObject & Sendable)?) in
            let wasOpen = !state.closed
            state.closed = true
            defer {
                state.wake = nil
                state.lease = nil
            }
            return (wasOpen, state.wake, state.lease)
        }
        withExtendedLifetime(lease) {}
        wake?()
        if wasOpen { onClose(self) }
    }

    /// Takes up to `maximum` pending bytes. When there are none and the stream is open,
    /// `park` is called (under the subscription's lock, so no `send` slips in between)
    /// and `wake` is kept for the next `send` or `close`.
    package func take(maximum: Int, park: () -> Void, wake: @escaping @Sendable () -> Void) -> Taken {
        var sent: (any AnyObject & Sendable)?
        defer { withExtendedLifetime(sent) {} }
        return state.withLock { state in
            if state.waiting > 0 {
                let count = min(maximum, state.waiting)
                let bytes = Array(state.pending[state.sent..<state.sent + count])
                state.sent += count
                if state.sent == state.pending.count {
                    state.pending.removeAll(keepingCapacity: state.pending.count <= maximumPending)
                    state.sent = 0
                } else if state.sent >= state.pending.count / 2 {
                    state.pending.removeFirst(state.sent)
                    state.sent = 0
                }
                state.opening -= min(count, state.opening)
                if state.opening == 0 {
                    sent = state.lease
                    state.lease = nil
                }
                return .bytes(bytes)
            }
            if state.closed { return .end }
            park()
            state.wake = wake
            return .nothing
        }
    }

    /// Whether the subscription was closed.
    package var isClosed: Bool {
        state.withLock { $0.closed }
    }

    /// How many bytes wait to be sent.
    package var pendingCount: Int {
        state.withLock { $0.waiting }
    }
}
