import CBufferedSocket
import Dispatch
import Foundation
@testable import GeotifyMQTT
import GeotifyTestSupport
import Synchronization
import Testing

/// The network loop reads every packet that has arrived before it reports the burst's
/// end (`.caughtUp`), where the bridge hands the burst to its lanes as one batch: at QoS 1
/// as at QoS 0. (libmosquitto's own wake-up pipe, written for each packet it queues, once
/// full made every QoS 1 burst end after its first packet: one batch, one commit and one
/// fence write per message.) The packets of a burst are read from the socket in as few
/// system calls as fit the read buffer (CBufferedSocket), not three or more a packet.
@Suite("MQTTClient bursts", .timeLimit(.minutes(1)), .waiting)
struct MQTTClientBurstTests {
    @Test("messages waiting in the socket are read in one burst, at QoS 0 and 1", arguments: [0, 1])
    func waitingMessagesAreOneBurst(qos: Int) throws {
        let broker = try TestBroker()
        let topic = uniqueTopic("burst")
        /// "m" for each message, "c" for each end of a burst, in the order they came.
        let sequence = Mutex<[Character]>([])
        /// The network thread's buffer fills when each message was handed over.
        let fills = Mutex<[UInt]>([])
        let receiver = try HeldReceiver(broker: broker, name: "burst", topic: topic, qos: qos) { _ in
            sequence.withLock { $0.append("m") }
            fills.withLock { $0.append(geotify_buffered_socket_fills()) }
        } onCaughtUp: {
            sequence.withLock { $0.append("c") }
        }

        // libmosquitto writes a byte to its wake-up pipe for every packet it queues; a
        // client that has sent a few thousand has filled it for good, as a running bridge has.
        for _ in 0..<3_000 { try receiver.client.publish(topic: uniqueTopic("filler"), payload: [], qos: 0, retain: false) }

        // mosquitto sends at most 20 QoS 1 messages before the receiver acknowledges them.
        let count = 20
        let sender = try TestClient(port: broker.port)
        for index in 0..<count { try sender.publish(topic, bytes: [UInt8(index)], qos: qos) }
        #expect(receiver.waitUntilSent(count), "the broker sent all \(count)")
        receiver.release()
        #expect(waitUntil { sequence.withLock { $0.filter { $0 == "m" }.count } == count })

        let events = sequence.withLock { $0 }
        let bursts = events.split(separator: "c").filter { !$0.isEmpty }
        #expect(bursts.count <= 2, "the \(count) messages waiting in the socket came in \(bursts.count) bursts: \(String(events))")
        let recorded = fills.withLock { $0 }
        if let first = recorded.first, let last = recorded.last {
            // The counter is the network thread's own (it has read the CONNACK at least).
            // All may have come in the first message's read when the thread took long
            // to read it: none more is then the best case, not a failure.
            #expect(first > 0 && last - first <= 2, "the waiting messages took \(last - first) reads into the buffer: \(recorded)")
        }
    }

    /// A burst ends after at most `burstLimit` packets even when more are waiting: its
    /// end is where the owner hands what was read on and publishes what follows, so a
    /// flood must not hold that back until the socket runs dry.
    @Test("a flood waiting in the socket is read in bursts of at most burstLimit messages")
    func burstsAreBounded() throws {
        let sizes = try burstSizes(ofAFloodOn: try TestBroker(), name: "flood")
        #expect(sizes.allSatisfy { $0 <= ConnectionSupervisor.burstLimit }, "bursts of \(sizes)")
    }

    /// The same while the client has QoS 1 messages of its own waiting for the broker's
    /// PUBACK: libmosquitto's `mosquitto_loop_read` then reads as many packets in one
    /// call as it has such messages queued, so a burst counted a call as one packet grew
    /// to `burstLimit` calls of dozens of packets each. Counted by what the calls
    /// delivered, a burst ends within one call of `burstLimit` (a call reads no more
    /// than the messages queued, `inFlight` here, past it).
    @Test("a flood is read in bursts of at most burstLimit messages while the client's own QoS 1 messages wait for their PUBACK")
    func burstsAreBoundedWithMessagesInFlight() throws {
        let broker = try TestBroker()
        let proxy = try AcknowledgementHoldingProxy(brokerPort: broker.port)
        defer { proxy.stop() }
        proxy.hold()
        let inFlight = 40
        let sizes = try burstSizes(ofAFloodOn: broker, through: proxy.port, name: "flood-in-flight") { receiver in
            for _ in 0..<inFlight { try receiver.client.publish(topic: uniqueTopic("held"), payload: [1], qos: 1, retain: false) }
            // libmosquitto sends 20 at a time (its in-flight window) and queues the rest.
            #expect(waitUntil { proxy.heldCount >= 20 }, "the broker's PUBACKs for the client's own messages are held")
        }
        #expect(sizes.allSatisfy { $0 < ConnectionSupervisor.burstLimit + inFlight }, "bursts of \(sizes)")
    }

    /// Floods a topic with `3 * burstLimit + 20` QoS 0 messages while a receiver connected
    /// on `port` (the broker's own unless a proxy's) is held in its first message, lets
    /// it go once the broker has sent them all, and returns the sizes of the bursts it
    /// read them in. `prepare` runs with the receiver before the flood.
    private func burstSizes(
        ofAFloodOn broker: TestBroker, through port: Int? = nil, name: String,
        prepare: (HeldReceiver) throws -> Void = { _ in }
    ) throws -> [Int] {
        let topic = uniqueTopic(name)
        /// The number of messages in each burst so far, the last one still open.
        let bursts = Mutex<[Int]>([0])
        let received = Mutex(0)
        let receiver = try HeldReceiver(broker: broker, port: port, name: name, topic: topic, qos: 0) { _ in
            bursts.withLock { $0[$0.count - 1] += 1 }
            received.withLock { $0 += 1 }
        } onCaughtUp: {
            bursts.withLock { $0.append(0) }
        }
        try prepare(receiver)

        let count = 3 * ConnectionSupervisor.burstLimit + 20
        let sender = try TestClient(port: broker.port)
        for index in 0..<count { try sender.publish(topic, bytes: index == 0 ? [0] : Array(String(index).utf8), qos: 0) }
        #expect(receiver.waitUntilSent(count), "the broker sent all \(count)")
        receiver.release()
        #expect(waitUntil { received.withLock { $0 } == count })
        let sizes = bursts.withLock { $0 }.filter { $0 > 0 }
        #expect(sizes.reduce(0, +) == count)
        return sizes
    }

    /// Writing a QoS 0 message reports it as published, and the end of the turn follows
    /// at once (`.caughtUp`, where the bridge's publisher hands over more), not only
    /// after whatever the socket brings next (or the idle poll's timeout).
    @Test("a QoS 0 message written is followed by .caughtUp before anything read later")
    func aWrittenMessageIsCaughtUpAtOnce() throws {
        let broker = try TestBroker()
        let topic = uniqueTopic("later")
        let recorder = EventRecorder()
        var options = MQTTOptions(clientID: "geotify-written-\(UUID().uuidString.prefix(8))", port: broker.port)
        options.cleanSession = true
        let client = try MQTTClient(options: options, onEvent: recorder.record)
        defer { client.stop() }
        try client.start()
        #expect(recorder.waitForConnected() != nil)
        #expect(recorder.waitForSubscribed(try client.subscribe(topic, qos: 0)) == [0])
        let sender = try TestClient(port: broker.port)

        let mark = recorder.count
        let id = try client.publish(topic: uniqueTopic("elsewhere"), payload: [1], qos: 0, retain: false)
        #expect(recorder.waitForPublished(id))
        // Something to read after the write: its turn would say .caughtUp too.
        try sender.publish(topic, "later", qos: 0)
        #expect(recorder.waitFor(after: mark) { event -> Bool? in
            if case .message = event { return true }
            return nil
        } == true)
        let events = Array(recorder.all.dropFirst(mark))
        let published = try #require(events.firstIndex { if case .published(id) = $0 { return true } else { return false } })
        let message = try #require(events.firstIndex { if case .message = $0 { return true } else { return false } })
        #expect(events[published..<message].contains { if case .caughtUp = $0 { return true } else { return false } }, "\(events)")
    }

    @Test("messages of every size, across the read buffer's 64 KiB, arrive whole and in order", .longWaiting)
    func everySizeArrivesWhole() throws {
        let broker = try TestBroker()
        let topic = uniqueTopic("sizes")
        let received = Mutex<[[UInt8]]>([])
        let recorder = EventRecorder()
        var options = MQTTOptions(clientID: "geotify-sizes-\(UUID().uuidString.prefix(8))", port: broker.port)
        options.cleanSession = true
        let receiver = try MQTTClient(options: options) { event in
            recorder.record(event)
            if case .message(let message) = event { received.withLock { $0.append(message.payload) } }
        }
        defer { receiver.stop() }
        try receiver.start()
        #expect(recorder.waitForConnected() != nil)
        #expect(recorder.waitForSubscribed(try receiver.subscribe(topic, qos: 0)) == [0])

        // Small packets around payloads just under, at and over the buffer's size, so that
        // packets straddle its end and some are larger than it.
        let sizes = [0, 1, 127, 128, 16_383, 16_384, 65_000, 3, 65_536, 65_537, 5, 200_000, 7] + Array(repeating: 40, count: 500)
        let payloads = sizes.enumerated().map { index, size in
            (0..<size).map { UInt8(truncatingIfNeeded: $0 &+ index) }
        }
        let sender = try TestClient(port: broker.port)
        for payload in payloads { try sender.publish(topic, bytes: payload, qos: 1) }
        #expect(waitUntil(timeout: 30) { received.withLock { $0.count } >= payloads.count })
        #expect(received.withLock { $0 } == payloads)
    }

    /// `.caughtUp` ends a burst of messages or acknowledgements, and only such a burst:
    /// a turn that delivered neither (the CONNACK's, a SUBACK's, an idle one) says
    /// nothing, or the bridge would hand its lanes an empty burst at every turn.
    @Test(".caughtUp follows only turns that delivered messages or acknowledgements")
    func caughtUpOnlyAfterMessages() throws {
        let broker = try TestBroker()
        let topic = uniqueTopic("burst")
        let fixture = try ClientFixture(port: broker.port)
        defer { fixture.client.stop() }
        try fixture.waitConnected()
        #expect(fixture.events.waitForSubscribed(try fixture.client.subscribe(topic, qos: 1)) == [1])
        let sender = try TestClient(port: broker.port)
        try sender.publish(topic, "one", qos: 1)
        #expect(fixture.events.waitFor { event -> Bool? in
            if case .caughtUp = event { return true }
            return nil
        } == true)
        let events = fixture.events.all
        let caughtUp = try #require(events.firstIndex { if case .caughtUp = $0 { return true } else { return false } })
        #expect(events[..<caughtUp].contains { if case .message = $0 { return true } else { return false } }, "\(events)")
    }
}

/// A client of `broker` subscribed to `topic`, whose network thread is held on the
/// first message (payload `[0]`) until `release()`, so that what the broker sends
/// meanwhile waits in its socket; `onMessage` and `onCaughtUp` run on that thread for
/// each message and each end of a burst.
private final class HeldReceiver {
    let client: MQTTClient
    private let broker: TestBroker
    private let clientID: String
    private let gate = DispatchSemaphore(value: 0)

    /// A client of `broker`, connected on `port` (the broker's own unless a proxy's).
    init(
        broker: TestBroker, port: Int? = nil, name: String, topic: String, qos: Int,
        onMessage: @escaping @Sendable (MQTTMessage) -> Void, onCaughtUp: @escaping @Sendable () -> Void
    ) throws {
        self.broker = broker
        clientID = "geotify-\(name)-\(UUID().uuidString.prefix(8))"
        var options = MQTTOptions(clientID: clientID, port: port ?? broker.port)
        options.cleanSession = true
        let recorder = EventRecorder()
        let gate = gate
        client = try MQTTClient(options: options) { event in
            recorder.record(event)
            switch event {
            case .message(let message):
                onMessage(message)
                if message.payload == [0] { _ = gate.wait(timeout: .now() + 20) }
            case .caughtUp:
                onCaughtUp()
            default:
                break
            }
        }
        try client.start()
        guard recorder.waitForConnected() != nil, recorder.waitForSubscribed(try client.subscribe(topic, qos: qos)) == [qos] else {
            client.stop()
            throw TestSupportError("\(clientID) did not connect and subscribe: \(recorder.all)")
        }
    }

    deinit {
        client.stop()
    }

    /// Waits until the broker's log says it sent this client `count` messages.
    func waitUntilSent(_ count: Int) -> Bool {
        let sent = "Sending PUBLISH to \(clientID) "
        return waitUntil { broker.log.components(separatedBy: sent).count - 1 >= count }
    }

    /// Lets the network thread go on.
    func release() {
        gate.signal()
    }
}
