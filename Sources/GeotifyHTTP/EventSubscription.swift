import Synchronization

/// One client's place in an `EventStream`: the bytes waiting to be sent to it, bounded so
/// a client that stops reading is closed (and reconnects for a fresh start) instead of
/// holding memory without limit: what is pending is dropped then, and the stream ends.
///
/// The opening (what the client starts from: the `retry:` field, then `open(_:holding:)`;
/// the whole state of a large fence book may be more than the bound) does not count
/// against the bound while it waits; what follows it may add up to `maximumPending` more.
/// What bounds the openings is the lease the opening may carry (the application's count
/// of its large answers unsent), let go once the opening has been taken whole, or the
/// stream closed.
///
/// What counts against `maximumPending` is also taken from the stream's `PendingBudget`,
/// shared by all its subscriptions, and given back as it is sent or dropped (or when the
/// subscription goes). When the budget has no room, `send` changes nothing and says so:
/// the stream then closes the subscriptions furthest behind (`overflow()`) until it has.
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

    /// What `send` did.
    enum Sent: Equatable {
        case queued
        /// The subscription is closed (now, for falling too far behind, or before).
        case closed
        /// The stream's budget has no room for the bytes: nothing was queued.
        case noRoom
    }

    private struct State {
        /// The bytes queued, of which those from `sent` on wait to be sent: taking moves
        /// `sent` rather than the bytes behind it (an opening of many megabytes is taken
        /// a few kilobytes at a time), and the sent bytes are dropped once they are at
        /// least half of the array, so each byte is moved at most about once. The array
        /// is then made anew, so the memory it takes follows what waits (at most about
        /// four times that, and `keptRoom` once all is sent).
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
        /// How many of them count against the bound: what the budget holds for them.
        var counted: Int { waiting - opening }

        /// Closes the stream and empties it; returns what it held, to be let go outside
        /// the lock, and gives the counted bytes back to `budget`.
        mutating func drop(into budget: PendingBudget) -> (pending: [UInt8], lease: (any AnyObject & Sendable)?) {
            budget.giveBack(counted)
            defer {
                closed = true
                pending = []
                sent = 0
                opening = 0
                lease = nil
            }
            return (pending, lease)
        }

        /// Whether the fields agree (asserted after each change in debug builds).
        func checked() -> Bool {
            0 <= sent && sent <= pending.count && 0 <= opening && opening <= waiting && (lease == nil || opening > 0)
        }
    }

    /// The most bytes that may wait for one client before it is closed.
    package let maximumPending: Int
    /// The most room a queue read to its end keeps for what comes next (a quarter
    /// second's updates, usually); a larger one is let go, so 256 streams that each once
    /// fell behind do not each keep up to a megabyte.
    package static let keptRoom = 16 << 10
    private let budget: PendingBudget
    private let state = Mutex(State())
    private let onClose: @Sendable (EventSubscription) -> Void
    private let onOverflow: @Sendable () -> Void

    init(
        first: [UInt8], maximumPending: Int, budget: PendingBudget,
        onClose: @escaping @Sendable (EventSubscription) -> Void, onOverflow: @escaping @Sendable () -> Void = {}
    ) {
        self.maximumPending = maximumPending
        self.budget = budget
        self.onClose = onClose
        self.onOverflow = onOverflow
        state.withLock { state in
            state.pending = first
            state.opening = first.count
        }
    }

    deinit {
        // A subscription let go with bytes still waiting (its client left) gives them back.
        budget.giveBack(state.withLock { $0.counted })
    }

    /// Queues the opening, the document the client starts from, whatever its size: it
    /// does not count against `maximumPending`. `lease` is kept until the opening has
    /// been taken whole (or the subscription closed), then let go. Says whether the
    /// subscription is open.
    @discardableResult
    package func open(_ bytes: [UInt8], holding lease: (any AnyObject & Sendable)? = nil) -> Bool {
        enqueue(bytes, opening: true, lease: lease) == .queued
    }

    /// Queues `bytes`; closes the subscription when that would exceed `maximumPending`.
    /// Queues nothing when the stream's budget has no room for them (`.noRoom`).
    func send(_ bytes: [UInt8]) -> Sent {
        enqueue(bytes, opening: false)
    }

    private func enqueue(_ bytes: [UInt8], opening: Bool, lease: (any AnyObject & Sendable)? = nil) -> Sent {
        // Let go of outside the lock (a lease's deinit takes its owner's lock).
        var dropped: (pending: [UInt8], lease: (any AnyObject & Sendable)?) = ([], lease)
        let (sent, overflowed, wake) = state.withLock { state -> (Sent, Bool, (@Sendable () -> Void)?) in
            guard !state.closed else { return (.closed, false, nil) }
            defer { assert(state.checked()) }
            var overflowed = false
            if opening {
                state.pending += bytes
                state.opening += bytes.count
                if state.opening > 0, let lease = dropped.lease {
                    state.lease = lease
                    dropped.lease = nil
                }
            } else if state.counted + bytes.count > maximumPending {
                // Too far behind: what waits is dropped now, not kept until the
                // connection times out.
                dropped = state.drop(into: budget)
                overflowed = true
            } else if budget.take(bytes.count) {
                state.pending += bytes
            } else {
                return (.noRoom, false, nil)
            }
            defer { state.wake = nil }
            return (state.closed ? .closed : .queued, overflowed, state.wake)
        }
        dropped = ([], nil)
        wake?()
        if overflowed {
            onOverflow()
            onClose(self)
        }
        return sent
    }

    /// Closes the subscription as one too far behind, the way `send` does past
    /// `maximumPending`: what waits for it is dropped (and given back to the budget), and
    /// it is counted through `onOverflow` if it was open. The stream calls it for the
    /// subscriptions furthest behind when its budget has no room.
    func overflow() {
        let (wasOpen, dropped, wake) = state.withLock { state in
            let wasOpen = !state.closed
            defer { state.wake = nil }
            return (wasOpen, state.drop(into: budget), state.wake)
        }
        withExtendedLifetime(dropped) {}
        wake?()
        if wasOpen {
            onOverflow()
            onClose(self)
        }
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
                defer { assert(state.checked()) }
                let counted = state.counted
                let count = min(maximum, state.waiting)
                let bytes = Array(state.pending[state.sent..<state.sent + count])
                state.sent += count
                if state.sent == state.pending.count {
                    state.pending.removeAll(keepingCapacity: state.pending.capacity <= Self.keptRoom)
                    state.sent = 0
                } else if state.sent >= state.pending.count / 2 {
                    // A copy the size of what waits: `removeFirst` would keep the room
                    // of the most the queue ever held.
                    state.pending = Array(state.pending[state.sent...])
                    state.sent = 0
                }
                state.opening -= min(count, state.opening)
                if state.opening == 0 {
                    sent = state.lease
                    state.lease = nil
                }
                budget.giveBack(counted - state.counted)
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

    /// The bytes its queue takes in memory: what waits, sent bytes not yet let go, and
    /// room to grow.
    package var bytesHeld: Int {
        state.withLock { $0.pending.capacity }
    }

    /// How far behind the client is: the waiting bytes that count against
    /// `maximumPending` and the stream's budget (all but the opening's).
    package var bytesBehind: Int {
        state.withLock { $0.counted }
    }
}
