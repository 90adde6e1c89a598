import Dispatch
import GeotifyMQTT
import GeotifyStore
import Synchronization

/// Sends messages through the MQTT client, in order, keeping the persisted outbox in
/// step so that after a crash nothing decided is lost and nothing delivered is repeated.
///
/// At most `windowSize` QoS 1 messages are handed to libmosquitto at a time (its own
/// in-flight limit, so it never queues them out of sight); the rest wait here. Before a
/// message is handed over, its outbox row is marked `sent` in the store; when the broker
/// acknowledges it, the row is removed. After a crash, unsent rows are published again
/// and sent ones are not: so the only notifications a crash can lose are the handful
/// handed over but not yet acknowledged (the in-flight window), and none is repeated.
///
/// Messages are handed over only while the broker has accepted the connection: before
/// that libmosquitto refuses them or, while a connection is being set up, sends them
/// twice. What was in flight when a connection dropped, libmosquitto resends itself
/// after reconnecting; until acknowledged, those rows count as unsent again.
final class Publisher: Sendable {
    /// A message waiting to be handed to the client, with its outbox row if persisted.
    private struct Queued {
        var message: OutboxMessage
        var outboxID: Int64?
    }

    private struct Tracking {
        var client: MQTTClient?
        var store: StateStore?
        /// Whether the broker has accepted the connection (and it has not dropped since).
        var online = false
        /// libmosquitto message id → outbox row id (nil for messages not persisted).
        var inFlight: [Int32: Int64?] = [:]
        /// Messages not yet handed over, oldest first.
        var waiting: [Queued] = []
        /// Where the waiting messages start in `waiting` (consumed from the front).
        var head = 0
        /// Outbox rows acknowledged but not yet removed from the store.
        var acknowledged: [Int64] = []
        /// Outbox rows to mark unsent in the store.
        var unsent: [Int64] = []
        /// Whether a pump is queued.
        var pumpQueued = false
    }

    /// The most QoS 1 messages in flight at once: libmosquitto's default limit.
    static let windowSize = 20
    /// The most messages kept waiting; beyond it the oldest are dropped (persisted ones
    /// are still in the outbox and go out at the next start).
    static let waitingLimit = 100_000

    private let tracking = Mutex(Tracking())
    private let pumpQueue = DispatchQueue(label: "geotify.outbox")
    private let logger: Logger
    private let counters: Counters
    private let health: StateHealth

    init(logger: Logger, counters: Counters, health: StateHealth) {
        self.logger = logger
        self.counters = counters
        self.health = health
    }

    /// Connects the publisher to the client it sends through and the store whose
    /// outbox it keeps.
    func attach(_ client: MQTTClient, store: StateStore) {
        tracking.withLock {
            $0.client = client
            $0.store = store
        }
    }

    /// Queues `message` for publishing; `outboxID` is its row in the persisted outbox.
    func send(_ message: OutboxMessage, outboxID: Int64? = nil) {
        tracking.withLock { tracking in
            if tracking.waiting.count - tracking.head >= Publisher.waitingLimit {
                tracking.head += 1
                counters.add("errors.publish_queue_full")
            }
            tracking.waiting.append(Queued(message: message, outboxID: outboxID))
            queuePump(&tracking)
        }
    }

    /// The broker accepted the connection: what waits can go.
    func connected() {
        tracking.withLock { tracking in
            tracking.online = true
            queuePump(&tracking)
        }
    }

    /// The connection dropped: what was in flight may not have reached the broker.
    func disconnected() {
        tracking.withLock { tracking in
            tracking.online = false
            tracking.unsent.append(contentsOf: tracking.inFlight.values.compactMap { $0 })
            queuePump(&tracking)
        }
    }

    /// Records the broker's acknowledgement of `messageID`.
    func acknowledged(_ messageID: Int32) {
        tracking.withLock { tracking in
            guard let outboxID = tracking.inFlight.removeValue(forKey: messageID) else { return }
            if let outboxID { tracking.acknowledged.append(outboxID) }
            queuePump(&tracking)
        }
    }

    /// The number of messages not yet acknowledged (waiting or in flight).
    var unacknowledged: Int {
        tracking.withLock { $0.inFlight.count + $0.waiting.count - $0.head }
    }

    /// Blocks until queued store updates and hand-overs are done.
    func flush() {
        pumpQueue.sync {}
    }

    private func queuePump(_ tracking: inout Tracking) {
        guard !tracking.pumpQueued else { return }
        tracking.pumpQueued = true
        pumpQueue.async { self.pump() }
    }

    /// Brings the store up to date and hands the next messages to the client: first
    /// their rows are marked sent, then they are published.
    private func pump() {
        let (store, acknowledged, unsent, batch) = tracking.withLock { tracking in
            tracking.pumpQueued = false
            defer {
                tracking.acknowledged.removeAll(keepingCapacity: true)
                tracking.unsent.removeAll(keepingCapacity: true)
            }
            var batch: [Queued] = []
            if tracking.online && tracking.client != nil {
                var capacity = Publisher.windowSize - tracking.inFlight.count
                while tracking.head < tracking.waiting.count {
                    let next = tracking.waiting[tracking.head]
                    if next.message.qos > 0 {
                        guard capacity > 0 else { break }
                        capacity -= 1
                    }
                    batch.append(next)
                    tracking.head += 1
                }
                if tracking.head > 1_024 && tracking.head * 2 > tracking.waiting.count {
                    tracking.waiting.removeFirst(tracking.head)
                    tracking.head = 0
                }
            }
            return (tracking.store, tracking.acknowledged, tracking.unsent, batch)
        }
        let sent = batch.compactMap(\.outboxID)
        if let store, !acknowledged.isEmpty || !unsent.isEmpty || !sent.isEmpty {
            do {
                let done = Set(acknowledged)
                try store.updateOutbox(removing: acknowledged, unsent: unsent.filter { !done.contains($0) }, sent: sent)
                health.succeeded()
            } catch {
                health.failed("the outbox", error) { self.send($0) }
                tracking.withLock {
                    $0.acknowledged.append(contentsOf: acknowledged)
                    $0.unsent.append(contentsOf: unsent)
                }
            }
        }
        guard !batch.isEmpty else { return }
        tracking.withLock { tracking in
            for (position, queued) in batch.enumerated() {
                guard let client = tracking.client else { return }
                do throws(MQTTError) {
                    let messageID = try client.publish(
                        topic: queued.message.topic, payload: queued.message.payload, qos: queued.message.qos,
                        retain: queued.message.retain, correlationData: queued.message.correlationData)
                    if queued.message.qos > 0 {
                        tracking.inFlight[messageID] = queued.outboxID
                    } else if let outboxID = queued.outboxID {
                        tracking.acknowledged.append(outboxID)
                    }
                } catch where error.isNotConnected {
                    let rest = batch[position...]
                    tracking.waiting.replaceSubrange(tracking.head..<tracking.head, with: rest)
                    tracking.unsent.append(contentsOf: rest.compactMap(\.outboxID))
                    tracking.online = false
                    break
                } catch {
                    counters.add("errors.publish")
                    logger.error("could not publish to \(queued.message.topic): \(error)")
                }
            }
            if !tracking.acknowledged.isEmpty || !tracking.unsent.isEmpty { queuePump(&tracking) }
        }
    }
}
