import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import Testing

/// Over TLS the socket's read buffer holds ciphertext, so a PUBLISH larger than the client
/// takes cannot be cut there: it is cut in the plaintext libmosquitto reads with
/// `SSL_read` (`geotify_buffered_socket_attach_tls`). Through a real mosquitto's TLS
/// listener, over MQTT 3.1.1, whose broker cannot be told the largest packet.
@Suite("MQTTClient over TLS: messages larger than it takes", .serialized, .timeLimit(.minutes(1)), .waiting)
struct MQTTClientTLSCutTests {
    /// Messages far past the limit (one spread over many TLS records, QoS 1 and 0) come
    /// without their payload, saying how much was left out, the QoS 1 one acknowledged
    /// (the broker sends it once); one just within the limit and the ones after come
    /// whole, in order, on the same connection.
    @Test("a message larger than the client takes comes without its payload over TLS too; the rest whole, in order")
    func largerThanItTakesOverTLS() throws {
        try Self.withConnected { broker, receiver, sender in
            // The packet of `within`: 2 + 5 topic bytes + 2 packet id + 980 = 989 bytes after a
            // fixed header of 3: 992, within the 1 000.
            let within = [UInt8](repeating: 0x61, count: 980)
            let sent: [(topic: String, payload: [UInt8], qos: Int)] = [
                ("big/1", [UInt8](repeating: 0x78, count: 300_000), 1),
                ("big/2", within, 1),
                ("big/3", [UInt8](repeating: 0x79, count: 5_000), 0),
                ("big/4", Array("next".utf8), 0),
            ]
            for message in sent {
                let id = try sender.client.publish(topic: message.topic, payload: message.payload, qos: message.qos, retain: false)
                if message.qos == 1 { #expect(sender.events.waitForPublished(id)) }
            }
            #expect(waitUntil { receiver.events.messages.count >= sent.count })
            // Compared by topic, QoS, payload size and bytes left out (a failure prints no payload).
            #expect(Self.summaries(receiver.events.messages) == [
                "big/1 q1 0 bytes, 300000 left out", "big/2 q1 980 bytes, 0 left out",
                "big/3 q0 0 bytes, 5000 left out", "big/4 q0 4 bytes, 0 left out",
            ])
            #expect(receiver.events.messages.dropFirst().first?.payload == within)
            // Acknowledged as any QoS 1 message: the broker holds nothing for the client, and
            // the connection was never dropped.
            #expect(receiver.events.all.filter { if case .disconnected = $0 { true } else { false } }.isEmpty, "\(receiver.events.all)")
            #expect(broker.log.contains("Sending PUBLISH to \(Self.receiverID) (d0, q1, r0, m1, 'big/1'"), "\(broker.log)")
            #expect(broker.log.contains("Received PUBACK from \(Self.receiverID) (Mid: 1"), "\(broker.log)")
        }
    }

    /// A stream of 600 messages of both QoS and sizes from empty to 20 KB (several TLS
    /// records), every fifth past the limit, while the receiver has QoS 1 messages of its
    /// own in flight (so libmosquitto would read many packets a call, and is held to one:
    /// the SSL_read that stops at a packet's end must read as "want read", not as an
    /// error that ends the connection): every message once, each QoS in order, the
    /// small QoS 0 ones taken out of the plaintext buffer whole, the large ones cut.
    @Test("a stream over TLS through the plaintext buffer: every message once, in order, cut exactly when too large")
    func streamOverTLS() throws {
        try Self.withConnected { _, receiver, sender in
            var expected: [String] = []
            var own: [Int32] = []
            for number in 0..<600 {
                if number % 2 == 0 { own.append(try receiver.client.publish(topic: "own/\(number)", payload: [1], qos: 1, retain: false)) }
                let size = number % 5 == 4 ? 1_000 + number * 31 : number % 7 * 130
                let qos = number % 3 == 0 ? 1 : 0
                let topic = "big/\(number)"
                _ = try sender.client.publish(topic: topic, payload: [UInt8](repeating: UInt8(number % 256), count: size), qos: qos, retain: false)
                // The packet: a command byte, the remaining length (7 bits a byte), then the
                // topic with its length, the packet id and the payload.
                let remaining = 2 + topic.utf8.count + qos * 2 + size
                let packet = 1 + (remaining < 128 ? 1 : remaining < 16_384 ? 2 : 3) + remaining
                expected.append(packet > 1_000 ? "\(topic) q\(qos) 0 bytes, \(size) left out" : "\(topic) q\(qos) \(size) bytes, 0 left out")
            }
            #expect(waitUntil { receiver.events.messages.count >= expected.count })
            #expect(own.allSatisfy { receiver.events.waitForPublished($0) }, "the receiver's own QoS 1 messages were acknowledged")
            #expect(receiver.events.all.filter { if case .disconnected = $0 { true } else { false } }.isEmpty, "\(receiver.events.all.suffix(5))")
            #expect(receiver.client.messagesReadWhole > 0, "QoS 0 messages taken out of the plaintext buffer whole")
            // The sender holds its QoS 1 messages past its window while QoS 0 ones go ahead, so
            // the order is each QoS's own.
            let number = { (message: MQTTMessage) in Int(message.topic.dropFirst(4)) ?? -1 }
            for qos in [0, 1] {
                let numbers = receiver.events.messages.filter { $0.qos == qos }.map(number)
                #expect(numbers == numbers.sorted(), "QoS \(qos) in the order sent")
            }
            let received = Self.summaries(receiver.events.messages.sorted { number($0) < number($1) })
            #expect(received.count == expected.count)
            for (index, (got, want)) in zip(received, expected).enumerated() where got != want {
                Issue.record("message \(index): got \(got), expected \(want)")
                break
            }
            #expect(expected.contains { $0.hasSuffix(" left out") && !$0.hasSuffix(" 0 left out") }, "the stream has messages to cut")
            let whole = receiver.events.messages.filter { $0.payloadLeftOut == 0 }
            #expect(whole.allSatisfy { message in message.payload.allSatisfy { $0 == UInt8((Int(message.topic.dropFirst(4)) ?? 0) % 256) } })
        }
    }

    static let receiverID = "tls-cut-receiver"

    /// Runs `body` with a broker with a TLS listener only, a receiver over MQTT 3.1.1 that
    /// takes packets of up to 1 000 bytes, subscribed to `big/#` at QoS 1, and a sender,
    /// both connected; then stops them all.
    static func withConnected(_ body: (TestBroker, ClientFixture, ClientFixture) throws -> Void) throws {
        let directory = try makeTemporaryDirectory("tls-cut")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try TestCertificates(in: directory)
        let broker = try TestBroker(extraConfig: certificates.brokerConfig)
        let tls = MQTTTLS(caFile: certificates.caFile)
        let receiver = try ClientFixture(port: broker.port) {
            $0.clientID = receiverID
            $0.tls = tls
            $0.protocolVersion = .v311
            $0.maximumIncomingPacketBytes = 1_000
        }
        defer { receiver.client.stop() }
        try receiver.waitConnected()
        let subscription = try receiver.client.subscribe("big/#", qos: 1)
        #expect(receiver.events.waitForSubscribed(subscription) == [1])
        let sender = try ClientFixture(port: broker.port) { $0.tls = tls }
        defer { sender.client.stop() }
        try sender.waitConnected()
        try body(broker, receiver, sender)
    }

    /// Each message as its topic, QoS, payload size and the bytes left out of it.
    static func summaries(_ messages: [MQTTMessage]) -> [String] {
        messages.map { "\($0.topic) q\($0.qos) \($0.payload.count) bytes, \($0.payloadLeftOut) left out" }
    }
}
