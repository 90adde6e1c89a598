import GeotifyMQTT
import GeotifyStore
import Synchronization

/// Sends messages through the MQTT client and tracks them until the broker acknowledges
/// them; acknowledged outbox messages leave the persisted outbox in batches.
///
/// libmosquitto queues unacknowledged QoS 1 messages while a connection is down and
/// resends them after reconnecting, but refuses messages before the first connection:
/// those wait here, in order, until `connected()`. The persisted outbox adds what
/// neither can: surviving the bridge itself dying; it is resent at the next start.
final class Publisher: Sendable {
    private struct Tracking {
        var client: MQTTClient?
        /// libmosquitto message id → outbox row id (nil for messages not persisted).
        var inFlight: [Int32: Int64?] = [:]
        /// Messages the client refused for want of a connection, oldest first.
        var waiting: [(message: OutboxMessage, outboxID: Int64?)] = []
        /// Outbox rows acknowledged but not yet removed from the store.
        var acknowledged: [Int64] = []
    }

    /// The most messages kept waiting for a first connection; beyond it the oldest are
    /// dropped (persisted ones are still in the outbox and go out at the next start).
    static let waitingLimit = 100_000

    private let tracking = Mutex(Tracking())
    private let logger: Logger
    private let counters: Counters

    init(logger: Logger, counters: Counters) {
        self.logger = logger
        self.counters = counters
    }

    /// Connects the publisher to the client it sends through.
    func attach(_ client: MQTTClient) {
        tracking.withLock { $0.client = client }
    }

    /// Publishes `message`; `outboxID` is its row in the persisted outbox, if it has one.
    ///
    /// The lock is held across the publish so that an acknowledgement, which may
    /// arrive on the network thread before `publish` returns, finds the id recorded.
    /// libmosquitto's publish does not take the lock its callbacks run under, so this
    /// cannot deadlock.
    func send(_ message: OutboxMessage, outboxID: Int64? = nil) {
        tracking.withLock { tracking in
            if tracking.waiting.isEmpty {
                publish(message, outboxID: outboxID, &tracking)
            } else {
                wait(message, outboxID: outboxID, &tracking)
            }
        }
    }

    /// Sends what waited for the connection, in order.
    func connected() {
        tracking.withLock { tracking in
            let waiting = tracking.waiting
            tracking.waiting.removeAll()
            for (message, outboxID) in waiting {
                if tracking.waiting.isEmpty {
                    publish(message, outboxID: outboxID, &tracking)
                } else {
                    tracking.waiting.append((message, outboxID))
                }
            }
        }
    }

    /// Records the broker's acknowledgement of `messageID`.
    func acknowledged(_ messageID: Int32) {
        tracking.withLock { tracking in
            if case let outboxID?? = tracking.inFlight.removeValue(forKey: messageID) {
                tracking.acknowledged.append(outboxID)
            }
        }
    }

    /// The number of QoS 1 messages not yet acknowledged, including those waiting.
    var unacknowledged: Int {
        tracking.withLock { $0.inFlight.count + $0.waiting.count }
    }

    /// Removes acknowledged messages from the persisted outbox. On failure they stay
    /// listed and the next flush tries again.
    func flushAcknowledged(to store: StateStore) {
        let ids = tracking.withLock { tracking in
            defer { tracking.acknowledged.removeAll(keepingCapacity: true) }
            return tracking.acknowledged
        }
        guard !ids.isEmpty else { return }
        do {
            try store.removeMessages(ids)
        } catch {
            counters.add("errors.state_write")
            logger.error("could not remove acknowledged messages from the outbox: \(error)")
            tracking.withLock { $0.acknowledged.append(contentsOf: ids) }
        }
    }

    private func publish(_ message: OutboxMessage, outboxID: Int64?, _ tracking: inout Tracking) {
        guard let client = tracking.client else {
            wait(message, outboxID: outboxID, &tracking)
            return
        }
        do {
            let messageID = try client.publish(
                topic: message.topic, payload: message.payload, qos: message.qos, retain: message.retain)
            if message.qos > 0 {
                tracking.inFlight[messageID] = outboxID
            } else if let outboxID {
                tracking.acknowledged.append(outboxID)
            }
        } catch where error.isNotConnected {
            wait(message, outboxID: outboxID, &tracking)
        } catch {
            counters.add("errors.publish")
            logger.error("could not publish to \(message.topic): \(error)")
        }
    }

    private func wait(_ message: OutboxMessage, outboxID: Int64?, _ tracking: inout Tracking) {
        if tracking.waiting.count >= Publisher.waitingLimit {
            tracking.waiting.removeFirst()
            counters.add("errors.publish_queue_full")
        }
        tracking.waiting.append((message, outboxID))
    }
}
