import Dispatch
import Foundation
import GeotifyMQTT
import GeotifyStore
import Synchronization

/// Sends messages through the MQTT client, in order, keeping the outbox's hand-over mark
/// in step so that after a crash nothing decided is lost and nothing handed over is
/// repeated.
///
/// At most `windowSize` QoS 1 messages are handed to libmosquitto at a time (its own
/// in-flight limit, so it never queues them out of sight); the rest wait here. Before a
/// persisted message is handed over, the outbox's mark (`OutboxWatermark`) is moved past
/// it; after a crash only rows past the mark are published again. So the only
/// notifications a crash can lose are the few handed over but not yet acknowledged (the
/// in-flight window), and none is repeated. Persisted messages must be sent in the
/// order of their row ids (`StateStore.save(...:then:)` makes that so).
///
/// Messages are handed over only while the broker has accepted the connection: before
/// that libmosquitto refuses them or, while a connection is being set up, sends them
/// twice. What was in flight when a connection dropped, libmosquitto resends itself
/// after reconnecting, with the same message ids.
///
/// While more than `waitingLimit` messages wait, `isSaturated` tells the lanes to hold
/// back, so a slow broker link slows the bridge down instead of filling its memory.
///
/// The tracking lock is held while calling `MQTTClient.publish`: sound because the
/// client runs libmosquitto in threaded mode (`ConnectionSupervisor`), where publishing
/// only queues the packet and never calls back on the caller's thread, and because
/// libmosquitto calls back (`acknowledged`) holding none of the locks `publish` takes.
final class Publisher: Sendable {
    /// A message waiting to be handed to the client.
    private struct Queued: Sendable {
        var message: OutboxMessage
        /// Its outbox row, when persisted.
        var outboxID: Int64?
        /// Called once the broker has acknowledged it (or it was handed over at QoS 0).
        var acknowledged: (@Sendable () -> Void)?
    }

    /// A message handed over, waiting for its acknowledgement.
    private struct Flight: Sendable {
        var outboxID: Int64?
        var acknowledged: (@Sendable () -> Void)?
    }

    private struct Tracking {
        var client: MQTTClient?
        var watermark: OutboxWatermark?
        /// Whether the broker has accepted the connection (and it has not dropped since).
        var online = false
        /// libmosquitto message id → what was handed over.
        var inFlight: [Int32: Flight] = [:]
        /// Messages not yet handed over, oldest first, from `head` on.
        var waiting: [Queued] = []
        var head = 0
        /// The outbox marks as last decided (written before each hand-over).
        var marks = OutboxWatermark.Marks(handed: 0, acknowledged: 0)
        /// Whether a pump is queued.
        var pumpQueued = false
        /// Messages taken out of `waiting` by a pump and not yet handed over.
        var handing = 0
        /// The newest outbox row actually published.
        var published: Int64 = 0
    }

    /// The most QoS 1 messages in flight at once: libmosquitto's default limit.
    static let windowSize = 20
    /// Above this many waiting messages the lanes hold back.
    static let waitingLimit = 50_000

    private let tracking = Mutex(Tracking())
    private let pumpQueue = DispatchQueue(label: "geotify.outbox")
    /// Broadcast whenever messages leave the waiting queue.
    private let drained = NSCondition()
    private let logger: Logger
    private let counters: Counters
    private let health: StateHealth

    init(logger: Logger, counters: Counters, health: StateHealth) {
        self.logger = logger
        self.counters = counters
        self.health = health
    }

    /// Connects the publisher to the client it sends through and the outbox mark it keeps.
    func attach(_ client: MQTTClient, watermark: OutboxWatermark) {
        tracking.withLock {
            $0.client = client
            $0.watermark = watermark
            $0.marks = watermark.read()
            $0.published = $0.marks.handed
        }
    }

    /// Queues `messages` for publishing, in order; `outboxIDs` (one per message, or none)
    /// are their rows in the persisted outbox.
    func send(_ messages: [OutboxMessage], outboxIDs: [Int64] = []) {
        guard !messages.isEmpty else { return }
        tracking.withLock { tracking in
            for (index, message) in messages.enumerated() {
                tracking.waiting.append(Queued(message: message, outboxID: index < outboxIDs.count ? outboxIDs[index] : nil))
            }
            queuePump(&tracking)
        }
    }

    /// Queues one message; `acknowledged` is called once the broker acknowledged it.
    func send(_ message: OutboxMessage, acknowledged: (@Sendable () -> Void)? = nil) {
        tracking.withLock { tracking in
            tracking.waiting.append(Queued(message: message, acknowledged: acknowledged))
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

    /// The connection dropped: nothing more is handed over until it is back (libmosquitto
    /// resends what was in flight itself).
    func disconnected() {
        tracking.withLock { $0.online = false }
    }

    /// Records the broker's acknowledgement of `messageID`.
    func acknowledged(_ messageID: Int32) {
        let flight = tracking.withLock { tracking -> Flight? in
            guard let flight = tracking.inFlight.removeValue(forKey: messageID) else { return nil }
            tracking.marks.acknowledged = Self.acknowledgedMark(tracking)
            if tracking.head < tracking.waiting.count { queuePump(&tracking) }
            return flight
        }
        flight?.acknowledged?()
    }

    /// The number of messages not yet acknowledged (waiting, being handed over, or in flight).
    var unacknowledged: Int {
        tracking.withLock { $0.inFlight.count + $0.waiting.count - $0.head + $0.handing }
    }

    /// Whether so many messages wait that the lanes should hold back.
    var isSaturated: Bool {
        tracking.withLock { $0.waiting.count - $0.head > Publisher.waitingLimit }
    }

    /// Waits until no more than half of `waitingLimit` messages wait, or the publisher is
    /// offline (then waiting would not help: the broker is away and nothing arrives).
    func waitWhileSaturated() {
        drained.lock()
        defer { drained.unlock() }
        while tracking.withLock({ $0.online && $0.waiting.count - $0.head > Publisher.waitingLimit / 2 }) {
            _ = drained.wait(until: Date().addingTimeInterval(0.5))
        }
    }

    /// Writes the outbox marks as they are now (the acknowledged one moves without a
    /// write of its own); called now and then and at stop.
    func saveMarks() {
        let (watermark, marks) = tracking.withLock { ($0.watermark, $0.marks) }
        do {
            try watermark?.write(marks)
        } catch {
            health.failed("the outbox mark", error) { self.send($0) }
        }
    }

    /// Blocks until queued hand-overs are done.
    func flush() {
        pumpQueue.sync {}
    }

    private func queuePump(_ tracking: inout Tracking) {
        guard !tracking.pumpQueued else { return }
        tracking.pumpQueued = true
        pumpQueue.async { self.pump() }
    }

    /// Everything published before the oldest persisted message still in flight was
    /// acknowledged.
    private static func acknowledgedMark(_ tracking: Tracking) -> Int64 {
        let oldest = tracking.inFlight.values.compactMap(\.outboxID).min()
        return oldest.map { $0 - 1 } ?? tracking.published
    }

    /// Hands the next messages to the client: first the outbox mark is moved past the
    /// persisted ones, then they are published.
    private func pump() {
        dispatchPrecondition(condition: .onQueue(pumpQueue))
        let (batch, marks, watermark) = tracking.withLock { tracking -> ([Queued], OutboxWatermark.Marks?, OutboxWatermark?) in
            tracking.pumpQueued = false
            guard tracking.online, tracking.client != nil else { return ([], nil, nil) }
            var batch: [Queued] = []
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
            tracking.handing += batch.count
            guard let newest = batch.compactMap(\.outboxID).max(), newest > tracking.marks.handed else {
                return (batch, nil, tracking.watermark)
            }
            tracking.marks.handed = newest
            return (batch, tracking.marks, tracking.watermark)
        }
        guard !batch.isEmpty else { return }
        drained.lock()
        drained.broadcast()
        drained.unlock()
        if let marks, let watermark {
            do {
                try watermark.write(marks)
                health.succeeded()
            } catch {
                health.failed("the outbox mark", error) { self.send($0) }
            }
        }
        var done: [@Sendable () -> Void] = []
        tracking.withLock { tracking in
            defer { tracking.handing -= batch.count }
            for (position, queued) in batch.enumerated() {
                guard let client = tracking.client else { return }
                do throws(MQTTError) {
                    let messageID = try client.publish(
                        topic: queued.message.topic, payload: queued.message.payload, qos: queued.message.qos,
                        retain: queued.message.retain, correlationData: queued.message.correlationData)
                    if queued.message.qos > 0 {
                        tracking.inFlight[messageID] = Flight(outboxID: queued.outboxID, acknowledged: queued.acknowledged)
                    } else if let acknowledged = queued.acknowledged {
                        done.append(acknowledged)
                    }
                    if let id = queued.outboxID { tracking.published = max(tracking.published, id) }
                } catch where error.isNotConnected {
                    tracking.waiting.replaceSubrange(tracking.head..<tracking.head, with: batch[position...])
                    tracking.online = false
                    return
                } catch {
                    counters.add(.errors(.publish))
                    logger.error("could not publish to \(queued.message.topic): \(error)")
                }
            }
            tracking.marks.acknowledged = Self.acknowledgedMark(tracking)
        }
        for callback in done { callback() }
    }
}
