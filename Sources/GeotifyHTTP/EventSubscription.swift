import Synchronization

/// One client's place in an `EventStream`: the bytes waiting to be sent to it, bounded so
/// a client that stops reading is closed (and reconnects for a fresh start) instead of
/// holding memory without limit.
///
/// The opening (what the client starts from, `open(_:)`: the whole state of a large
/// fence book may be more than the bound) does not count against the bound while it
/// waits; what follows it may add up to `maximumPending` more.
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
        var pending: [UInt8] = []
        /// How many of the pending bytes are the opening's, not counted against the bound.
        var opening = 0
        var closed = false
        var wake: (@Sendable () -> Void)?
    }

    /// The most bytes that may wait for one client before it is closed.
    package let maximumPending: Int
    private let state = Mutex(State())
    private let onClose: @Sendable (EventSubscription) -> Void

    init(first: [UInt8], maximumPending: Int, onClose: @escaping @Sendable (EventSubscription) -> Void) {
        self.maximumPending = maximumPending
        self.onClose = onClose
        state.withLock { $0.pending = first }
    }

    /// Queues the opening, the document the client starts from, whatever its size: it
    /// does not count against `maximumPending`. Says whether the subscription is open.
    @discardableResult
    package func open(_ bytes: [UInt8]) -> Bool {
        enqueue(bytes, opening: true)
    }

    /// Queues `bytes`; closes the subscription when that would exceed `maximumPending`.
    /// Says whether the subscription is still open.
    @discardableResult
    package func send(_ bytes: [UInt8]) -> Bool {
        enqueue(bytes, opening: false)
    }

    private func enqueue(_ bytes: [UInt8], opening: Bool) -> Bool {
        let (open, wake) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            guard !state.closed else { return (false, nil) }
            if opening {
                state.pending += bytes
                state.opening += bytes.count
            } else if state.pending.count - state.opening + bytes.count > maximumPending {
                state.closed = true
            } else {
                state.pending += bytes
            }
            defer { state.wake = nil }
            return (!state.closed, state.wake)
        }
        wake?()
        if !open { onClose(self) }
        return open
    }

    /// Ends the stream once what is pending has been sent.
    package func close() {
        let (wasOpen, wake) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
            let wasOpen = !state.closed
            state.closed = true
            defer { state.wake = nil }
            return (wasOpen, state.wake)
        }
        wake?()
        if wasOpen { onClose(self) }
    }

    /// Takes up to `maximum` pending bytes. When there are none and the stream is open,
    /// `park` is called (under the subscription's lock, so no `send` slips in between)
    /// and `wake` is kept for the next `send` or `close`.
    package func take(maximum: Int, park: () -> Void, wake: @escaping @Sendable () -> Void) -> Taken {
        state.withLock { state in
            if !state.pending.isEmpty {
                let count = min(maximum, state.pending.count)
                let bytes = Array(state.pending.prefix(count))
                state.pending.removeFirst(count)
                state.opening -= min(count, state.opening)
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
        state.withLock { $0.pending.count }
    }
}
