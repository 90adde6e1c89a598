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
/// in-flight limit, so it never queues them out of sight), each until the broker
/// acknowledges it; and at most `unwrittenLimit` QoS 0 messages (retained last values),
/// each until libmosquitto has written it to the socket (it reports that as it reports
/// an acknowledgement). The rest wait here, in order: so a flood of last values, such as
/// the first fixes of thousands of devices announcing their presence in every fence,
/// waits here, and what libmosquitto holds stays bounded.
///
/// Before a persisted message is handed over, the outbox's mark (`OutboxWatermark`) is
/// moved past it; after a crash only rows past the mark are published again. So the only
/// notifications a crash can lose are the few handed over but not yet acknowledged (the
/// in-flight window), and none is repeated. Persisted messages must be sent in the
/// order of their row ids (`StateStore.save(...:then:)` makes that so, with `queue`).
///
/// Messages are handed over only while the broker has accepted the connection: before
/// that libmosquitto refuses them or, while a connection is being set up, sends them
/// twice. What was in flight when a connection dropped, libmosquitto resends itself
/// after reconnecting, with the same message ids.
///
/// At most `waitingLimit` messages wait in memory, so a slow broker link cannot fill it.
/// Past that, persisted messages are left in the outbox and read back in order once the
/// queue has drained (nothing is lost; they only wait longer), and other messages
/// (replies, error reports, position updates) wait as long as their bytes stay within
/// `directByteLimit`; past both they are dropped and counted
/// (`errors.publish_queue_full`). The lanes never wait for the publisher: the network
/// thread that would feed them also reads the broker's acknowledgements, so waiting
/// there could stall both.
///
/// Messages are handed over by whichever thread sends them or, for acknowledgements, by
/// the network thread at the end of each burst (`pump()`): no thread of its own, so no
/// hand-off and no wake-up per message. One thread pumps at a time (`pumping`); another
/// that finds it busy leaves it a note to go round once more, so the order holds.
///
/// No message larger than the broker takes (`maximumPacketBytes`) is handed over: the
/// broker would close the connection for it, and libmosquitto would send it again on
/// reconnecting, so one such message (a reply holding a large polygon fence) kept the
/// bridge off the broker for good. It is taken as sent instead (a persisted one leaves the
/// outbox as one acknowledged does), counted (`errors.message_too_large`) and handed to
/// the report `attach` was given.
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
        /// Whether its size counts against `directByteLimit` while it waits.
        var budgeted = false
        /// Whether, though not persisted, it keeps its place behind the persisted
        /// messages decided before it: a message of a commit that could not be written.
        var followsPersisted = false

        /// What it weighs against `directByteLimit`.
        var size: Int { message.topic.utf8.count + message.payload.count }
    }

    /// A QoS 1 message handed over, waiting for its acknowledgement.
    private struct Flight: Sendable {
        var outboxID: Int64?
        var acknowledged: (@Sendable () -> Void)?
        /// Its topic, to name it should the broker refuse it (`refused(_:)`).
        var topic: String
    }

    private struct Tracking {
        var client: MQTTClient?
        /// Told of each message not handed over (`attach`).
        var notHandedOver: (@Sendable (OutboxMessage, NotHandedOver) -> Void)?
        var store: StateStore?
        var watermark: OutboxWatermark?
        /// Whether the broker has accepted the connection (and it has not dropped since).
        var online = false
        /// libmosquitto message id → what was handed over.
        var inFlight: [Int32: Flight] = [:]
        /// QoS 0 messages handed over and not yet written (reported as published).
        var unwritten = 0
        /// The outbox rows among them, for the acknowledged mark.
        var rowsInFlight = RowsInFlight()
        /// Messages not yet handed over, oldest first, from `head` on.
        var waiting: [Queued] = []
        var head = 0
        /// The outbox marks as last decided (written before each hand-over).
        var marks = OutboxWatermark.Marks(handed: 0, acknowledged: 0)
        /// Whether a thread is pumping now.
        var pumping = false
        /// Whether more was queued while a thread was pumping.
        var again = false
        /// Messages taken out of `waiting` by a pump and not yet handed over.
        var handing = 0
        /// The newest outbox row actually published.
        var published: Int64 = 0
        /// The newest outbox row queued in memory (or handed over).
        var queuedThrough: Int64 = 0
        /// Whether persisted messages past `queuedThrough` were left in the outbox for lack
        /// of room, to be read back once there is.
        var spilled = false
        /// The newest outbox row a spill left in the outbox.
        var spilledThrough: Int64 = 0
        /// Messages of commits that could not be written, decided while a spill left
        /// persisted messages in the outbox: each waits until the rows up to `after` are
        /// read back, so that it does not overtake them.
        var behindSpill: [(after: Int64, queued: Queued)] = []
        /// The topic and payload bytes of the budgeted messages waiting.
        var directBytes = 0
    }

    /// The most QoS 1 messages in flight at once (libmosquitto is told the same, so it
    /// queues none out of sight): enough that a burst of transitions (a device's first
    /// fix announces its presence in every fence) leaves in a few round trips; these
    /// are what a crash can lose of the notifications.
    static let windowSize = 100
    /// The most QoS 0 messages handed to libmosquitto and not yet written: a few hundred
    /// kilobytes at most. They are not what a crash can lose (the last values are
    /// published again after a start), so this bounds memory only, and is larger than
    /// the window so that last values rarely wait for it.
    static let unwrittenLimit = 1_024
    /// The most messages waiting in memory by default: a few hundred kilobytes. A burst
    /// of transitions larger than that (every device's first fix announcing its presence
    /// in all its fences, a broker busy with a flood) waits in the outbox and is read back
    /// as the queue drains. At 8 192 the burst of 20 000 announcements of the side-by-side
    /// benchmark held about 3 MiB more at the peak, for the same CPU per message.
    static let defaultWaitingLimit = 1_024

    /// By default, how many bytes of messages that are not persisted (replies above all) may wait
    /// once `waitingLimit` messages wait. The input cannot be held back instead: the
    /// acknowledgements that drain this queue come in on the same socket as the
    /// commands whose replies fill it. A storm of 8 000 commands at 4 000 a second
    /// left 10 500 messages waiting and lost 2 360 replies at 8 192.
    static let defaultDirectByteLimit = 32 << 20

    /// The most messages waiting in memory; persisted ones past it wait in the outbox.
    let waitingLimit: Int
    /// The largest packet handed over (`Settings.maximumPacketBytes`).
    let maximumPacketBytes: Int
    /// The most bytes of messages not persisted waiting once `waitingLimit` is reached.
    let directByteLimit: Int
    /// How many persisted messages are read back at a time after a spill.
    private var readBack: Int { max(1, waitingLimit / 2) }

    private let tracking = Mutex(Tracking())
    /// Held while the marks are read and written, so that a write of older marks
    /// (`saveMarks`) never lands after a newer one and moves the hand-over mark back.
    private let markWrites = Mutex(())
    /// Broadcast when messages leave the waiting queue, for `sendPatiently`.
    private let room = NSCondition()
    private let counters: Counters
    private let health: StateHealth

    init(
        counters: Counters, health: StateHealth, waitingLimit: Int = Publisher.defaultWaitingLimit,
        directByteLimit: Int = Publisher.defaultDirectByteLimit, maximumPacketBytes: Int = Settings.largestPacketBytes
    ) {
        self.waitingLimit = max(1, waitingLimit)
        self.directByteLimit = directByteLimit
        self.maximumPacketBytes = maximumPacketBytes
        self.counters = counters
        self.health = health
    }

    /// Why a message was not handed to libmosquitto, for the bridge to report.
    enum NotHandedOver: Sendable, Equatable {
        /// Its packet of `size` bytes is larger than the broker takes: than
        /// `maximumPacketBytes`, or than the smaller `announced` Maximum Packet Size of an
        /// MQTT 5 broker (libmosquitto refused it).
        case tooLarge(size: Int, announced: Int? = nil)
        /// libmosquitto refused it (not for want of a connection).
        case refused(MQTTError)
    }

    /// Connects the publisher to the client it sends through and the store whose outbox
    /// and mark it keeps; `notHandedOver` is told of each message not handed over and
    /// why, to report it (outside the publisher's lock).
    func attach(
        _ client: MQTTClient, store: StateStore, notHandedOver: @escaping @Sendable (OutboxMessage, NotHandedOver) -> Void = { _, _ in }
    ) {
        tracking.withLock {
            $0.client = client
            $0.notHandedOver = notHandedOver
            $0.store = store
            $0.watermark = store.watermark
            $0.marks = store.watermark.read()
            $0.published = $0.marks.handed
            $0.queuedThrough = $0.marks.handed
        }
    }

    /// Queues `messages` (not persisted) for publishing, in order, and hands over what
    /// the window allows.
    func send(_ messages: [OutboxMessage]) {
        guard !messages.isEmpty else { return }
        queue(messages)
        pump()
    }

    /// Queues persisted messages (`outboxIDs`, one per message, are their rows in the
    /// outbox), in order, without handing any over: it is called inside
    /// `StateStore.save(...:then:)`, which holds the store's lock, and handing over may
    /// read the outbox back (a spill). Call `pump()` once the save has returned.
    func queue(_ messages: [OutboxMessage], outboxIDs: [Int64]) {
        precondition(messages.count == outboxIDs.count, "one outbox row per persisted message")
        guard !messages.isEmpty else { return }
        tracking.withLock { tracking in
            for (message, id) in zip(messages, outboxIDs) { enqueue(Queued(message: message, outboxID: id), &tracking) }
        }
    }

    /// Queues messages that are not persisted, without handing any over: for a caller
    /// that queues under a lock of its own to keep an order (`Occupancy.apply`). Call
    /// `pump()` once that lock is released.
    func queue(_ messages: [OutboxMessage]) {
        guard !messages.isEmpty else { return }
        tracking.withLock { tracking in
            for message in messages { enqueue(Queued(message: message), &tracking) }
        }
    }

    /// Queues `messages` (not persisted) as the waiting queue has room, waiting for it
    /// (never on the network thread: it makes the room); what is left when the
    /// connection drops is not queued, since what calls this announces again on the next
    /// connection.
    func sendPatiently(_ messages: [OutboxMessage]) {
        var rest = messages[...]
        while !rest.isEmpty {
            let (taken, online) = tracking.withLock { tracking -> (Int, Bool) in
                let room = waitingLimit - (tracking.waiting.count - tracking.head)
                let count = min(max(room, 0), rest.count)
                for message in rest.prefix(count) { tracking.waiting.append(Queued(message: message)) }
                return (count, tracking.online)
            }
            rest = rest.dropFirst(taken)
            pump()
            guard !rest.isEmpty else { return }
            guard online else {
                counters.add(.errors(.publishQueueFull), rest.count)
                return
            }
            room.lock()
            _ = room.wait(until: Date().addingTimeInterval(0.1))
            room.unlock()
        }
    }

    /// Queues the messages of a commit that could not be written (a full or failing
    /// disk): not persisted, yet in their place behind the persisted messages decided
    /// before them, which a spill may have left in the outbox or a mark that cannot be
    /// written may hold back. Past `directByteLimit` they are dropped and counted.
    func sendUnpersisted(_ messages: [OutboxMessage]) {
        guard !messages.isEmpty else { return }
        tracking.withLock { tracking in
            for message in messages {
                var queued = Queued(message: message)
                queued.followsPersisted = true
                guard tracking.spilled else {
                    enqueue(queued, &tracking)
                    continue
                }
                guard tracking.directBytes + queued.size <= directByteLimit else {
                    counters.add(.errors(.publishQueueFull))
                    continue
                }
                queued.budgeted = true
                tracking.directBytes += queued.size
                tracking.behindSpill.append((tracking.spilledThrough, queued))
            }
        }
        pump()
    }

    /// Queues one message; `acknowledged` is called once the broker acknowledged it.
    func send(_ message: OutboxMessage, acknowledged: (@Sendable () -> Void)? = nil) {
        tracking.withLock { $0.waiting.append(Queued(message: message, acknowledged: acknowledged)) }
        pump()
    }

    /// Adds one message to the waiting queue. When `waitingLimit` messages wait, a
    /// persisted one is left in the outbox (read back later), and any other is dropped
    /// once the bytes of those waiting would pass `directByteLimit`.
    private func enqueue(_ queued: Queued, _ tracking: inout Tracking) {
        var queued = queued
        let full = tracking.waiting.count - tracking.head >= waitingLimit
        if let id = queued.outboxID {
            if tracking.spilled || full {
                tracking.spilled = true
                tracking.spilledThrough = max(tracking.spilledThrough, id)
                return
            }
            tracking.queuedThrough = max(tracking.queuedThrough, id)
        } else {
            if full && tracking.directBytes + queued.size > directByteLimit {
                counters.add(.errors(.publishQueueFull))
                return
            }
            queued.budgeted = true
            tracking.directBytes += queued.size
        }
        tracking.waiting.append(queued)
    }

    /// The broker accepted the connection: what waits can go.
    func connected() {
        tracking.withLock { $0.online = true }
        pump()
    }

    /// The connection dropped: nothing more is handed over until it is back. libmosquitto
    /// resends the QoS 1 messages in flight itself; the QoS 0 ones not yet written are
    /// gone (the lanes publish every last value again on connecting), so they no longer
    /// count.
    func disconnected() {
        tracking.withLock { tracking in
            tracking.online = false
            tracking.unwritten = 0
        }
    }

    /// Records the broker's acknowledgement of `messageID`, or for a QoS 0 message that
    /// libmosquitto wrote it (on the network thread, which pumps at the end of the burst
    /// and after writing).
    func acknowledged(_ messageID: Int32) {
        settle(messageID)?.acknowledged?()
    }

    /// Records the broker's refusal of the QoS 1 message `messageID`
    /// (`MQTTEvent.publishRefused`) as its acknowledgement: sent again it would be
    /// refused again. Returns its topic, nil when it was not in flight.
    func refused(_ messageID: Int32) -> String? {
        guard let flight = settle(messageID) else { return nil }
        flight.acknowledged?()
        return flight.topic
    }

    /// Ends the wait for `messageID`: the QoS 1 message in flight under it, returned, or
    /// else a QoS 0 message written.
    private func settle(_ messageID: Int32) -> Flight? {
        tracking.withLock { tracking -> Flight? in
            guard let flight = tracking.inFlight.removeValue(forKey: messageID) else {
                // Not a QoS 1 message in flight: a QoS 0 one written.
                if tracking.unwritten > 0 { tracking.unwritten -= 1 }
                return nil
            }
            if let row = flight.outboxID { tracking.rowsInFlight.acknowledged(row) }
            tracking.marks.acknowledged = Self.acknowledgedMark(tracking)
            return flight
        }
    }

    /// Whether, online, messages wait (in memory, or spilled to the outbox) while at
    /// least half the window (and half the QoS 0 limit) is free: the window is refilled
    /// at a burst's end, from the acknowledgements the burst read, so the network loop
    /// then ends the burst at once rather than wait for more (`BurstPacing`).
    var canSendMore: Bool {
        tracking.withLock {
            Self.canSendMore(
                online: $0.online, waiting: $0.waiting.count > $0.head || $0.spilled,
                inFlight: $0.inFlight.count, unwritten: $0.unwritten)
        }
    }

    /// `canSendMore` of a publisher `online` or not, with messages `waiting` or not,
    /// `inFlight` QoS 1 messages handed over and `unwritten` QoS 0 ones.
    static func canSendMore(online: Bool, waiting: Bool, inFlight: Int, unwritten: Int) -> Bool {
        online && waiting && inFlight <= windowSize / 2 && unwritten <= unwrittenLimit / 2
    }

    /// The messages handed to libmosquitto and not yet acknowledged (QoS 1, at most
    /// `windowSize`) or written (QoS 0, at most `unwrittenLimit`).
    var handedOver: (acknowledging: Int, writing: Int) {
        tracking.withLock { ($0.inFlight.count, $0.unwritten) }
    }

    /// The number of messages not yet acknowledged (waiting, being handed over, or in flight).
    var unacknowledged: Int {
        tracking.withLock { Self.inMemory(&$0) }
    }

    /// The messages in memory not yet acknowledged: waiting, being handed over, in flight.
    private static func inMemory(_ tracking: inout Tracking) -> Int {
        tracking.inFlight.count + tracking.unwritten + tracking.waiting.count - tracking.head + tracking.handing
            + tracking.behindSpill.count
    }

    /// How many messages were decided and not yet acknowledged by the broker: waiting,
    /// being handed over, in flight, and, after a spill, left in the outbox to be read
    /// back (counted there; a read-back at that moment may count a few twice).
    var pending: Int {
        let (inMemory, spilledAfter, store) = tracking.withLock { tracking in
            (Self.inMemory(&tracking), tracking.spilled ? tracking.queuedThrough : nil, tracking.store)
        }
        guard let spilledAfter, let store else { return inMemory }
        return inMemory + ((try? store.countMessages(after: spilledAfter)) ?? 0)
    }

    /// Whether everything queued was acknowledged: nothing waiting, being handed over, in
    /// flight, or left in the outbox by a spill.
    var isDrained: Bool {
        tracking.withLock { $0.inFlight.isEmpty && $0.unwritten == 0 && $0.waiting.count == $0.head && $0.handing == 0 && !$0.spilled }
    }

    /// Writes the outbox marks as they are now (the acknowledged one moves without a
    /// write of its own); called now and then and at stop.
    func saveMarks() {
        let failure = markWrites.withLock { _ -> StoreError? in
            let (watermark, marks) = tracking.withLock { ($0.watermark, $0.marks) }
            do throws(StoreError) {
                try watermark?.write(marks)
                return nil
            } catch {
                return error
            }
        }
        if let failure { health.failed("the outbox mark", failure) { self.send($0) } }
    }

    /// Moves the hand-over mark to `newest` (and writes the acknowledged one as it is);
    /// returns whether the mark was written: persisted messages past it must wait if not.
    private func writeHandedMark(through newest: Int64, _ watermark: OutboxWatermark) -> Bool {
        let failure = markWrites.withLock { _ -> StoreError? in
            var marks = tracking.withLock { $0.marks }
            guard newest > marks.handed else { return nil }
            marks.handed = newest
            do throws(StoreError) {
                try watermark.write(marks)
            } catch {
                return error
            }
            tracking.withLock { $0.marks.handed = max($0.marks.handed, newest) }
            return nil
        }
        guard let failure else { return true }
        health.failed("the outbox mark (the notifications it would cover wait until it is written)", failure) { message in
            tracking.withLock { $0.waiting.append(Queued(message: message)) }
        }
        return false
    }

    /// After a spill, reads the messages left in the outbox back into the queue, in order,
    /// once it has room; the spill ends when the outbox has no more.
    private func readBackIfRoom() {
        let (store, after) = tracking.withLock { tracking -> (StateStore?, Int64) in
            guard tracking.spilled, tracking.waiting.count - tracking.head < waitingLimit / 2 else { return (nil, 0) }
            return (tracking.store, tracking.queuedThrough)
        }
        guard let store else { return }
        do {
            let chunk = readBack
            try store.pendingMessages(after: after, limit: chunk) { pending in
                counters.add(.outboxReadBack, pending.count)
                tracking.withLock { tracking in
                    for message in pending {
                        tracking.waiting.append(Queued(message: message.message, outboxID: message.id))
                        tracking.queuedThrough = message.id
                    }
                    if pending.count < chunk { tracking.spilled = false }
                    Self.releaseBehindSpill(&tracking)
                }
            }
        } catch {
            health.failed("the outbox", error) { self.send($0) }
        }
    }

    /// Moves the messages waiting behind the spill whose persisted predecessors are read
    /// back (all of them once the spill ends) to the waiting queue, in order.
    private static func releaseBehindSpill(_ tracking: inout Tracking) {
        var ready = 0
        while ready < tracking.behindSpill.count,
            !tracking.spilled || tracking.behindSpill[ready].after <= tracking.queuedThrough
        {
            ready += 1
        }
        guard ready > 0 else { return }
        tracking.waiting.append(contentsOf: tracking.behindSpill[..<ready].map(\.queued))
        tracking.behindSpill.removeFirst(ready)
        assert(tracking.spilled || tracking.behindSpill.isEmpty, "nothing waits behind a spill that ended")
    }

    /// Everything published before the oldest persisted message still in flight was
    /// acknowledged.
    private static func acknowledgedMark(_ tracking: Tracking) -> Int64 {
        tracking.rowsInFlight.oldest.map { $0 - 1 } ?? tracking.published
    }

    /// Hands the waiting messages to the client as the window allows, unless another
    /// thread is at it (it then goes round once more): first the outbox mark is moved past
    /// the persisted ones, then they are published. When the mark cannot be written (a
    /// full or failing disk), the persisted ones go back to the head of the queue, to be
    /// tried again at the next round (a send, an acknowledgement, or the housekeeping's
    /// pump every second): published past the mark, they would be published again after
    /// a crash. Messages not persisted go out regardless.
    func pump() {
        let first = tracking.withLock { tracking -> Bool in
            if tracking.pumping {
                tracking.again = true
                return false
            }
            tracking.pumping = true
            return true
        }
        guard first else { return }
        while handOver() {}
    }

    /// Puts `messages`, taken from the waiting queue and not handed over, back at its
    /// head in order (older than anything waiting), their bytes counted again.
    private static func putBack(_ messages: ArraySlice<Queued>, into tracking: inout Tracking) {
        tracking.waiting.replaceSubrange(tracking.head..<tracking.head, with: messages)
        tracking.directBytes += messages.reduce(0) { $0 + ($1.budgeted ? $1.size : 0) }
    }

    /// One round of `pump`: returns whether to go round again.
    private func handOver() -> Bool {
        readBackIfRoom()
        let (batch, newest, watermark) = tracking.withLock { tracking -> ([Queued], Int64?, OutboxWatermark?) in
            tracking.again = false
            guard tracking.online, tracking.client != nil else { return ([], nil, nil) }
            var capacity = Publisher.windowSize - tracking.inFlight.count
            var unwritten = Publisher.unwrittenLimit - tracking.unwritten
            let start = tracking.head
            var newest: Int64?
            // The messages are read in place; only the batch is copied out (or, when it
            // is all that waits, the waiting queue is taken whole).
            while tracking.head < tracking.waiting.count {
                if tracking.waiting[tracking.head].message.qos > 0 {
                    guard capacity > 0 else { break }
                    capacity -= 1
                } else {
                    guard unwritten > 0 else { break }
                    unwritten -= 1
                }
                if tracking.waiting[tracking.head].budgeted { tracking.directBytes -= tracking.waiting[tracking.head].size }
                if let id = tracking.waiting[tracking.head].outboxID { newest = max(newest ?? id, id) }
                tracking.head += 1
            }
            var batch: [Queued] = []
            if start == 0 && tracking.head == tracking.waiting.count {
                swap(&batch, &tracking.waiting)
                // Room for the next round, as `removeAll(keepingCapacity:)` kept it.
                tracking.waiting.reserveCapacity(min(batch.count, 1_024))
                tracking.head = 0
            } else {
                batch = Array(tracking.waiting[start..<tracking.head])
                if tracking.head == tracking.waiting.count {
                    tracking.waiting.removeAll(keepingCapacity: tracking.waiting.count <= 1_024)
                    tracking.head = 0
                } else if tracking.head > 1_024 && tracking.head * 2 > tracking.waiting.count {
                    tracking.waiting.removeFirst(tracking.head)
                    tracking.head = 0
                }
            }
            tracking.handing += batch.count
            guard let newest, newest > tracking.marks.handed else {
                return (batch, nil, tracking.watermark)
            }
            return (batch, newest, tracking.watermark)
        }
        if !batch.isEmpty {
            room.lock()
            room.broadcast()
            room.unlock()
        }
        var going = batch
        var heldBack: [Queued] = []
        if let newest, let watermark, !writeHandedMark(through: newest, watermark) {
            // The persisted messages wait for the mark, and the messages of failed
            // commits behind them wait with them; the others go.
            going = []
            for queued in batch {
                if queued.outboxID != nil || (queued.followsPersisted && !heldBack.isEmpty) {
                    heldBack.append(queued)
                } else {
                    going.append(queued)
                }
            }
        }
        var done: [@Sendable () -> Void] = []
        var notHandedOver: [(OutboxMessage, NotHandedOver)] = []
        var report: (@Sendable (OutboxMessage, NotHandedOver) -> Void)?
        let again = tracking.withLock { tracking -> Bool in
            report = tracking.notHandedOver
            defer { tracking.handing -= batch.count }
            guard tracking.online else {
                // The connection dropped while the mark was written: the batch waits, in
                // order, for `connected()`. Handed over now, a QoS 1 message could come
                // in the middle of the reconnection: libmosquitto 2.0.11 marks what it
                // holds to be sent again before it has a socket, and one published in
                // between is taken as sent and waits for an acknowledgement that never
                // comes. `disconnected()` comes first, on the thread that reconnects.
                Self.putBack(batch[...], into: &tracking)
                tracking.pumping = false
                return false
            }
            // Older than any persisted message waiting: back at the head, in order.
            Self.putBack(heldBack[...], into: &tracking)
            /// Records `queued` as libmosquitto's, under `messageID`.
            func handedOver(_ queued: Queued, messageID: Int32) {
                if queued.message.qos > 0 {
                    let replaced = tracking.inFlight.updateValue(
                        Flight(outboxID: queued.outboxID, acknowledged: queued.acknowledged, topic: queued.message.topic),
                        forKey: messageID)
                    // A message id libmosquitto gives again (they wrap at 65 535) ends
                    // the wait for the row that had it, as the search of the window did.
                    if let row = replaced?.outboxID { tracking.rowsInFlight.acknowledged(row) }
                    if let row = queued.outboxID { tracking.rowsInFlight.handed(row) }
                } else {
                    tracking.unwritten += 1
                    if let acknowledged = queued.acknowledged { done.append(acknowledged) }
                }
                if let id = queued.outboxID { tracking.published = max(tracking.published, id) }
            }
            /// Takes `queued` as sent without handing it over: the broker would close the
            /// connection for its packet of `size` bytes (more than `announced`, when an
            /// MQTT 5 broker's limit refused it).
            func leftOut(_ queued: Queued, size: Int, announced: Int? = nil) {
                if let id = queued.outboxID { tracking.published = max(tracking.published, id) }
                if let acknowledged = queued.acknowledged { done.append(acknowledged) }
                counters.add(.errors(.messageTooLarge))
                notHandedOver.append((queued.message, .tooLarge(size: size, announced: announced)))
            }
            // By index: `enumerated()` copied each message whole.
            publishing: for position in going.indices {
                guard let client = tracking.client else { break }
                let size = PublishPacketSize.of(
                    topicBytes: going[position].message.topic.utf8.count, payloadBytes: going[position].message.payload.count,
                    qos: going[position].message.qos, correlationDataBytes: going[position].message.correlationData?.count)
                guard size <= maximumPacketBytes else {
                    leftOut(going[position], size: size)
                    continue
                }
                do throws(MQTTError) {
                    let messageID = try client.publish(
                        topic: going[position].message.topic, payload: going[position].message.payload,
                        qos: going[position].message.qos, retain: going[position].message.retain,
                        correlationData: going[position].message.correlationData)
                    handedOver(going[position], messageID: messageID)
                } catch {
                    let queued = going[position]
                    // A QoS 1 message libmosquitto kept (its write failed, or there was
                    // no connection) goes out when the connection is back, as those in
                    // flight do: handing it over again would send it twice.
                    if let messageID = error.keptMessageID { handedOver(queued, messageID: messageID) }
                    if error.isNotConnected {
                        // The rest wait, in order, for `connected()`.
                        let rest = error.keptMessageID == nil ? position : position + 1
                        Self.putBack(going[rest...], into: &tracking)
                        tracking.online = false
                        break publishing
                    }
                    if error.isOversize {
                        // A broker speaking MQTT 5 told libmosquitto a smaller limit.
                        leftOut(queued, size: size, announced: client.brokerMaximumPacketSize)
                    } else if error.keptMessageID == nil {
                        counters.add(.errors(.publish))
                        notHandedOver.append((queued.message, .refused(error)))
                    }
                }
            }
            tracking.marks.acknowledged = Self.acknowledgedMark(tracking)
            if tracking.again && tracking.online { return true }
            tracking.pumping = false
            return false
        }
        for callback in done { callback() }
        for (message, reason) in notHandedOver { report?(message, reason) }
        return again
    }
}
