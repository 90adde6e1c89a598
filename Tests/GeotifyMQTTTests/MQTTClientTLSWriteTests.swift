import CBufferedSocket
import Foundation
@testable import GeotifyMQTT
import GeotifyTestSupport
import Synchronization
import Testing

/// Over TLS, what libmosquitto writes in a turn is gathered as plaintext and encrypted in
/// one `SSL_write` when the turn's writes are flushed (`CBufferedSocket`'s `SSL_write`),
/// not a TLS record a packet. Through a real mosquitto's TLS listener.
@Suite("MQTTClient over TLS: a turn's packets in few records", .serialized, .timeLimit(.minutes(1)), .waiting)
struct MQTTClientTLSWriteTests {
    /// 300 QoS 0 messages handed over at once, then a QoS 1 message: all arrive whole and
    /// in order, and the sender's network thread made far fewer `SSL_write` calls of its
    /// gathered plaintext than it wrote packets (read when the QoS 1 message's PUBACK
    /// comes, after the turns that wrote the others were flushed). Of 1 000 bytes each,
    /// with one of 70 000 among them (larger than the buffer: OpenSSL's directly), the
    /// records of one `SSL_write` fill the socket's buffer, which is flushed to the
    /// kernel in between.
    @Test("300 messages handed over at once go out over TLS in far fewer SSL_writes, whole and in order", arguments: [100, 1_000])
    func aTurnsPacketsAreEncryptedTogether(size: Int) throws {
        try Self.withReceiver(subscribedTo: "gathered/#", qos: 1) { broker, tls, receiver in
            let events = EventRecorder()
            /// The sender's encryptions when each of its QoS 1 messages was acknowledged.
            let encryptions = Mutex<[Int32: UInt]>([:])
            var options = MQTTOptions(clientID: "geotify-\(UUID().uuidString.prefix(12))", port: broker.port)
            options.cleanSession = true
            options.tls = tls
            let sender = try MQTTClient(options: options) { event in
                if case .published(let id) = event { encryptions.withLock { $0[id] = geotify_buffered_socket_encryptions() } }
                events.record(event)
            }
            try sender.start()
            defer { sender.stop() }
            #expect(events.waitForConnected() != nil)

            let count = 300
            let sizes = (0..<count).map { size > 100 && $0 == count / 2 ? 70_000 : size }
            for number in 0..<count {
                _ = try sender.publish(topic: "gathered/\(number)", payload: Array(repeating: UInt8(number % 256), count: sizes[number]), qos: 0, retain: false)
            }
            let last = try sender.publish(topic: "gathered/last", payload: [1], qos: 1, retain: false)
            #expect(events.waitForPublished(last))
            #expect(waitUntil { receiver.events.messages.count >= count + 1 })
            Self.expectInOrderAndWhole(receiver.events.messages, prefix: "gathered/", sizes: sizes)
            let made = try #require(encryptions.withLock { $0[last] })
            #expect(made > 0 && made <= UInt(count / 4), "\(count + 1) packets written in \(made) SSL_writes of gathered plaintext")
        }
    }

    /// 12 MB handed over while the broker reads nothing (stopped: the kernel's buffers
    /// fill, OpenSSL wants its write again, the gathered plaintext waits and libmosquitto
    /// keeps the packets it is refused): once the broker runs again, every message
    /// arrives, whole and in order, and the connection was never dropped.
    @Test("over TLS, what waits while the broker reads nothing arrives whole and in order afterwards")
    func aBrokerThatReadsNothingHoldsTheGatheredPlaintext() throws {
        try Self.withReceiver(subscribedTo: "held/#", qos: 0) { broker, tls, receiver in
            let sender = try ClientFixture(port: broker.port) {
                $0.tls = tls
                $0.keepAlive = 60
            }
            defer { sender.client.stop() }
            try sender.waitConnected()

            let count = 3_000
            let refusals = geotify_buffered_socket_write_refusals()
            broker.pause()
            for number in 0..<count {
                _ = try sender.client.publish(topic: "held/\(number)", payload: Array(repeating: UInt8(number % 256), count: 4_000), qos: 0, retain: false)
            }
            let last = try sender.client.publish(topic: "held/last", payload: [1], qos: 1, retain: false)
            // 12 MB is more than the kernel's buffers of a connection hold: the sender's
            // network thread comes to a write it must refuse.
            #expect(waitUntil(timeout: 30) { geotify_buffered_socket_write_refusals() > refusals }, "a write was refused while the broker read nothing")
            broker.resume()
            #expect(sender.events.waitForPublished(last, timeout: 30))
            #expect(waitUntil(timeout: 30) { receiver.events.messages.count >= count + 1 })
            Self.expectInOrderAndWhole(receiver.events.messages, prefix: "held/", sizes: Array(repeating: 4_000, count: count))
            #expect(sender.events.all.filter { if case .disconnected = $0 { true } else { false } }.isEmpty, "\(sender.events.all.suffix(5))")
        }
    }

    /// Expects `messages` to be `prefix` + 0, 1, … in order, message `n` of `sizes[n]`
    /// bytes, each `n % 256`, then `prefix` + `last`. Payloads are compared as `Data`
    /// (one memcmp each): 12 MB byte by byte in a debug build took seconds.
    static func expectInOrderAndWhole(_ messages: [MQTTMessage], prefix: String, sizes: [Int]) {
        #expect(messages.map(\.topic) == sizes.indices.map { "\(prefix)\($0)" } + ["\(prefix)last"], "every message once, in order")
        #expect(zip(messages, sizes.enumerated()).allSatisfy { message, expected in
            Data(message.payload) == Data(repeating: UInt8(expected.offset % 256), count: expected.element)
        }, "every message whole")
    }

    /// Runs `body` with a broker with a TLS listener only, the TLS settings that trust
    /// it, and a receiver over TLS subscribed to `filter` at `qos`; then stops them.
    static func withReceiver(
        subscribedTo filter: String, qos: Int, _ body: (TestBroker, MQTTTLS, ClientFixture) throws -> Void
    ) throws {
        let directory = try makeTemporaryDirectory("tls-write")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try TestCertificates(in: directory)
        // mosquitto drops a QoS 0 message for a subscriber that has 1 000 packets waiting
        // already (its default `max_queued_messages`): a receiver slowed by a busy machine
        // lost the last 164 of 3 000 held messages so. The test is about the sender.
        let broker = try TestBroker(extraConfig: certificates.brokerConfig + "max_queued_messages 100000\n")
        let tls = MQTTTLS(caFile: certificates.caFile)
        let receiver = try ClientFixture(port: broker.port) { $0.tls = tls }
        defer { receiver.client.stop() }
        try receiver.waitConnected()
        let subscription = try receiver.client.subscribe(filter, qos: qos)
        #expect(receiver.events.waitForSubscribed(subscription) == [qos])
        try body(broker, tls, receiver)
    }
}

