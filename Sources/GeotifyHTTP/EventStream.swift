import Synchronization

/// A broadcast of Server-Sent Events to every client that subscribed: the live updates of
/// the map page (positions, notifications, fence changes).
///
/// Publishing never blocks on a client: each subscription queues bytes up to its bound,
/// and one that falls that far behind is closed, what it had pending dropped, and
/// reported through `onOverflow` (its browser reconnects and starts from a fresh
/// snapshot). `keepAlive()` sends a comment to all, which the owner calls every
/// few seconds so proxies keep idle streams open and dead clients are found.
package final class EventStream: Sendable {
    /// The most bytes that may wait for one client.
    package let maximumPending: Int
    /// How long a browser waits before reconnecting, in milliseconds (`retry:`).
    package let retryMilliseconds: Int
    /// The most clients at once; a further one is refused.
    package let maximumSubscribers: Int
    private let subscriptions = Mutex<[ObjectIdentifier: EventSubscription]>([:])
    /// Called each time a subscriber is closed for falling `maximumPending` behind.
    private let onOverflow: @Sendable () -> Void

    package init(
        maximumPending: Int = 1 << 20, retryMilliseconds: Int = 2000, maximumSubscribers: Int = 256,
        onOverflow: @escaping @Sendable () -> Void = {}
    ) {
        self.maximumPending = maximumPending
        self.retryMilliseconds = retryMilliseconds
        self.maximumSubscribers = maximumSubscribers
        self.onOverflow = onOverflow
    }

    /// A new subscription, starting with the `retry:` field and then `first` (the state
    /// the client starts from); nil when `maximumSubscribers` are already subscribed.
    package func subscribe(first: [ServerSentEvent] = []) -> EventSubscription? {
        let opening = ServerSentEvent.retry(milliseconds: retryMilliseconds) + first.flatMap(\.encoded)
        let subscription = EventSubscription(
            first: opening, maximumPending: maximumPending,
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

    private func broadcast(_ bytes: [UInt8]) {
        for subscription in subscriptions.withLock({ Array($0.values) }) {
            subscription.send(bytes)
        }
    }
}
