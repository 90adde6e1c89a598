import Synchronization

/// A broadcast of Server-Sent Events to every client that subscribed: the live updates of
/// the map page (positions, notifications, fence changes).
///
/// Publishing never blocks on a client: each subscription queues bytes up to its bound,
/// and one that falls that far behind is closed, what it had pending dropped, and
/// reported through `onOverflow` (its browser reconnects and starts from a fresh
/// snapshot). All subscriptions together hold at most `maximumPendingTotal` bytes: when a
/// send would pass that, the subscriptions furthest behind (the most bytes pending) are
/// closed first, the same way, until it fits, so clients that open streams and never read
/// them cost a bounded total however many there are, and one that keeps up is never
/// closed for them. `keepAlive()` sends a comment to all, which the owner calls every
/// few seconds so proxies keep idle streams open and dead clients are found.
package final class EventStream: Sendable {
    /// The most bytes that may wait for one client unless the owner gives another bound.
    package static let defaultMaximumPending = 1 << 20
    /// The most bytes that may wait for one client.
    package let maximumPending: Int
    /// How long a browser waits before reconnecting, in milliseconds (`retry:`).
    package let retryMilliseconds: Int
    /// The most clients at once; a further one is refused.
    package let maximumSubscribers: Int
    private let subscriptions = Mutex<[ObjectIdentifier: EventSubscription]>([:])
    /// What waits for all clients together, and its bound.
    private let budget: PendingBudget
    /// Held while subscriptions are closed to make room in the budget, so that publishers
    /// on several threads close one at a time, each only as many as its send needs.
    private let makingRoom = Mutex(())
    /// Called each time a subscriber is closed for falling `maximumPending` behind, or
    /// for being furthest behind when `maximumPendingTotal` was reached.
    private let onOverflow: @Sendable () -> Void

    /// `maximumPendingTotal` is at least `maximumPending`: a send one client may take
    /// then always fits once the others are closed.
    package init(
        maximumPending: Int = EventStream.defaultMaximumPending, maximumPendingTotal: Int = 16 << 20, retryMilliseconds: Int = 2000,
        maximumSubscribers: Int = 256, onOverflow: @escaping @Sendable () -> Void = {}
    ) {
        precondition(maximumPendingTotal >= maximumPending, "EventStream: maximumPendingTotal \(maximumPendingTotal) is below maximumPending \(maximumPending)")
        self.maximumPending = maximumPending
        self.retryMilliseconds = retryMilliseconds
        self.maximumSubscribers = maximumSubscribers
        self.budget = PendingBudget(maximum: maximumPendingTotal)
        self.onOverflow = onOverflow
    }

    /// The most bytes that may wait for all clients together (beyond their openings).
    package var maximumPendingTotal: Int {
        budget.maximum
    }

    /// A new subscription, starting with the `retry:` field (the start of its opening;
    /// the state the client starts from follows through `EventSubscription.open`); nil
    /// when `maximumSubscribers` are already subscribed.
    package func subscribe() -> EventSubscription? {
        let subscription = EventSubscription(
            first: ServerSentEvent.retry(milliseconds: retryMilliseconds), maximumPending: maximumPending, budget: budget,
            onClose: { [weak self] closed in
                _ = self?.subscriptions.withLock { $0.removeValue(forKey: ObjectIdentifier(closed)) }
            },
            onOverflow: onOverflow)
        let added = subscriptions.withLock { subscriptions -> Bool in
            guard subscriptions.count < maximumSubscribers else { return false }
            subscriptions[ObjectIdentifier(subscription)] = subscription
            return true
        }
        return added ? subscription : nil
    }

    /// Sends `event` to every subscriber.
    package func publish(_ event: ServerSentEvent) {
        broadcast(event.encoded)
    }

    /// Sends a keep-alive comment to every subscriber.
    package func keepAlive() {
        broadcast(ServerSentEvent.keepAlive)
    }

    /// Ends every stream (when the server stops).
    package func closeAll() {
        for subscription in subscriptions.withLock({ Array($0.values) }) {
            subscription.close()
        }
    }

    /// How many clients are subscribed.
    package var subscriberCount: Int {
        subscriptions.withLock { $0.count }
    }

    /// How many bytes wait for all clients together, beyond their openings (at most
    /// `maximumPendingTotal`).
    package var pendingTotal: Int {
        budget.total
    }

    private func broadcast(_ bytes: [UInt8]) {
        for subscription in subscriptions.withLock({ Array($0.values) }) {
            deliver(bytes, to: subscription)
        }
    }

    /// Sends `bytes` to `subscription`; when the budget has no room for them, closes the
    /// subscriptions furthest behind (`subscription` itself when it is) until it has.
    /// Each turn closes one that holds bytes, or `subscription`, so the turns end.
    private func deliver(_ bytes: [UInt8], to subscription: EventSubscription) {
        guard subscription.send(bytes) == .noRoom else { return }
        makingRoom.withLock { _ in
            while subscription.send(bytes) == .noRoom {
                // None holding any means closed streams still sending what they had
                // (the server is stopping): then it is this one that has no room.
                (furthestBehind() ?? subscription).overflow()
            }
        }
    }

    /// The subscribed client with the most bytes counted against the budget; nil when
    /// none holds any.
    private func furthestBehind() -> EventSubscription? {
        var furthest: (subscription: EventSubscription, behind: Int)?
        for subscription in subscriptions.withLock({ Array($0.values) }) {
            let behind = subscription.bytesBehind
            if behind > furthest?.behind ?? 0 { furthest = (subscription, behind) }
        }
        return furthest?.subscription
    }
}
