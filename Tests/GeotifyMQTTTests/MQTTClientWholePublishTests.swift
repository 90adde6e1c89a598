import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import Synchronization
import Testing

/// The network loop reads QoS 0 PUBLISH packets that its read buffer holds whole itself,
/// and leaves every other packet to libmosquitto (WholePublishTests has the buffer's side).
/// Through a real client against a broker scripted byte by byte: the messages arrive
/// whole and in the order sent, whichever of the two read them, libmosquitto still
/// acknowledges QoS 1, keeps MQTT 5 properties, and refuses a topic that is not UTF-8 by
/// ending the connection, with nothing after it delivered.
@Suite("MQTTClient reading QoS 0 messages out of the read buffer", .timeLimit(.minutes(1)), .waiting)
struct MQTTClientWholePublishTests {
    typealias Packet = WholePublishTests

    /// Connects a client speaking `version` to a scripted broker and waits until it is
    /// connected, so that the loop reads what follows out of its buffer.
    private func connected(_ version: MQTTProtocolVersion) throws -> (ScriptedBroker, ClientFixture) {
        let broker = try ScriptedBroker(version: version)
        let fixture = try ClientFixture(port: broker.port) {
            $0.protocolVersion = version
            $0.reconnectDelayMin = 30
            $0.reconnectDelayMax = 30
        }
        try fixture.waitConnected()
        return (broker, fixture)
    }

    @Test(
        "QoS 0 messages arrive whole and in order, between QoS 1, MQTT 5 properties and a body past the buffer",
        arguments: [MQTTProtocolVersion.v311, .v5])
    func inOrder(version: MQTTProtocolVersion) throws {
        let (broker, fixture) = try connected(version)
        defer { fixture.client.stop() }
        let properties: [UInt8]? = version == .v5 ? [] : nil
        func publish(_ topic: String, _ payload: String, header: UInt8 = 0x30, packetID: UInt16? = nil, with: [UInt8]? = nil)
            -> [UInt8] {
            Packet.publish(Array(topic.utf8), Array(payload.utf8), header: header, packetID: packetID, properties: with ?? properties)
        }
        let large = String(repeating: "L", count: 70_000)
        var first = publish("a/1", "one") + publish("a/2", "two", header: 0x31) + publish("a/3", "three")
        first += publish("q/1", "acknowledged", header: 0x32, packetID: 5) + publish("a/4", "four")
        if version == .v5 {
            // Response Topic (0x08) "r": libmosquitto reads this one and gives the property.
            first += publish("p/1", "asked", with: [0x08, 0x00, 0x01, 0x72])
        }
        broker.send(first)
        broker.send(publish("a/5", "five") + publish("big", large) + publish("a/6", "six") + publish("a/7", "seven"))

        var expected = [
            MQTTMessage(topic: "a/1", payload: Array("one".utf8)),
            MQTTMessage(topic: "a/2", payload: Array("two".utf8), retain: true),
            MQTTMessage(topic: "a/3", payload: Array("three".utf8)),
            MQTTMessage(topic: "q/1", payload: Array("acknowledged".utf8), qos: 1),
            MQTTMessage(topic: "a/4", payload: Array("four".utf8)),
        ]
        if version == .v5 { expected.append(MQTTMessage(topic: "p/1", payload: Array("asked".utf8), responseTopic: "r")) }
        expected += [
            MQTTMessage(topic: "a/5", payload: Array("five".utf8)),
            MQTTMessage(topic: "big", payload: Array(large.utf8)),
            MQTTMessage(topic: "a/6", payload: Array("six".utf8)),
            MQTTMessage(topic: "a/7", payload: Array("seven".utf8)),
        ]
        waitUntil(timeout: 10) { fixture.events.messages.count >= expected.count }
        #expect(fixture.events.messages == expected)
        // a/1 to a/4 of the first write are read out of the buffer; QoS 1, the one with a
        // property and the one past the buffer are libmosquitto's; the rest depends on
        // how the second write's bytes come in.
        let libmosquittos = version == .v5 ? 3 : 2
        #expect((4...(expected.count - libmosquittos)).contains(fixture.client.messagesReadWhole),
                "\(fixture.client.messagesReadWhole) of \(expected.count) read out of the buffer")
        // PUBACK of packet 5 (MQTT 5 leaves out the reason code when it is success).
        let puback: [UInt8] = [0x40, 0x02, 0x00, 0x05]
        let sent = broker.received(where: { $0.firstRange(of: puback) != nil })
        #expect(sent.firstRange(of: puback) != nil, "libmosquitto acknowledged the QoS 1 message: \(sent)")
    }

    /// libmosquitto's `mosquitto_loop_read` reads as many packets a call as the client has
    /// QoS 1 messages queued, whatever it is asked: the read buffer holds it to the one
    /// packet it was called for, so the positions after a packet it must read still come
    /// out of the buffer while the bridge's notifications wait for their PUBACK.
    @Test("with QoS 1 messages in flight, libmosquitto reads the one packet it must, and the QoS 0 ones after it come out of the buffer")
    func onePacketForLibmosquitto() throws {
        let (broker, fixture) = try connected(.v311)
        defer { fixture.client.stop() }
        // Never acknowledged: 30 QoS 1 messages stay queued in libmosquitto.
        for number in 0..<30 { try fixture.client.publish(topic: "out/\(number)", payload: [1], qos: 1, retain: false) }
        _ = broker.received(where: { $0.firstRange(of: Array("out/9".utf8)) != nil })
        let positions = (0..<30).map { Packet.publish(Array("in/\($0)".utf8), Array("p".utf8)) }
        broker.send(Packet.publish(Array("q/1".utf8), Array("ack me".utf8), header: 0x32, packetID: 9) + positions.joined())
        waitUntil(timeout: 10) { fixture.events.messages.count >= 31 }
        #expect(fixture.events.messages.map(\.topic) == ["q/1"] + (0..<30).map { "in/\($0)" })
        // A write may reach the client in parts; each part's last packet may be cut off
        // and left to libmosquitto. Left to libmosquitto's rule, it read them all.
        #expect(fixture.client.messagesReadWhole >= 28, "\(fixture.client.messagesReadWhole) of 30 read out of the buffer")
    }

    /// Over MQTT 3.1.1 a message larger than `maximumIncomingPacketBytes` reaches
    /// libmosquitto without its payload (CutPublishTests has the buffer's side): it is
    /// delivered empty, saying how much was left out, libmosquitto acknowledges it as any
    /// QoS 1 message, and the next comes whole.
    @Test("a message larger than the client takes comes without its payload, acknowledged, and the next one whole")
    func largerThanItTakes() throws {
        let broker = try ScriptedBroker(version: .v311)
        let fixture = try ClientFixture(port: broker.port) {
            $0.reconnectDelayMin = 30
            $0.reconnectDelayMax = 30
            $0.maximumIncomingPacketBytes = 1_000
        }
        defer { fixture.client.stop() }
        try fixture.waitConnected()
        let payload = [UInt8](repeating: 0x78, count: 100_000)
        broker.send(Packet.publish(Array("big/1".utf8), payload, header: 0x32, packetID: 6) + Packet.publish(Array("a/1".utf8), Array("next".utf8)))
        waitUntil(timeout: 10) { fixture.events.messages.count >= 2 }
        var cut = MQTTMessage(topic: "big/1", payload: [], qos: 1)
        cut.payloadLeftOut = payload.count
        #expect(fixture.events.messages == [cut, MQTTMessage(topic: "a/1", payload: Array("next".utf8))])
        let puback: [UInt8] = [0x40, 0x02, 0x00, 0x06]
        let sent = broker.received(where: { $0.firstRange(of: puback) != nil })
        #expect(sent.firstRange(of: puback) != nil, "libmosquitto acknowledged the cut message: \(sent)")
    }

    @Test(
        "a QoS 0 message whose topic libmosquitto refuses ends the connection; it and what follows are not delivered",
        arguments: [[0x61, 0xFF] as [UInt8], [0x61, 0x00, 0x62], [0xC0, 0x80]])
    func refusedTopic(topic: [UInt8]) throws {
        let (broker, fixture) = try connected(.v311)
        defer { fixture.client.stop() }
        let start = fixture.events.count
        let valid = (1...3).map { Packet.publish(Array("ok/\($0)".utf8), Array("fine".utf8)) }
        broker.send(valid[0] + valid[1] + Packet.publish(topic, Array("bad".utf8)) + valid[2])
        let ended = fixture.events.waitFor(after: start) { event -> Bool? in
            if case .disconnected = event { return true }
            return nil
        }
        #expect(ended == true, "libmosquitto ended the connection: \(fixture.events.all)")
        #expect(fixture.events.messages.map(\.topic) == ["ok/1", "ok/2"])
        #expect(fixture.client.messagesReadWhole == 2, "ok/1 and ok/2 were read out of the buffer, the refused one left to libmosquitto")
    }
}

/// A stand-in for an MQTT broker: accepts one connection on 127.0.0.1, answers CONNECT
/// with a successful CONNACK, then writes what the test gives it (`send`) and keeps what
/// the client sends (`received`).
private final class ScriptedBroker: Sendable {
    let port: Int
    private let connection = Mutex<Int32>(-1)
    private let fromClient = Mutex<[UInt8]>([])

    init(version: MQTTProtocolVersion) throws {
        let (listener, port) = try listenOnLoopback()
        self.port = port
        let connack: [UInt8] = version == .v5 ? [0x20, 0x03, 0x00, 0x00, 0x00] : [0x20, 0x02, 0x00, 0x00]
        Thread.detachNewThread { [self] in
            defer { close(listener) }
            var accepted: Int32
            repeat { accepted = accept(listener, nil, nil) } while accepted < 0 && errno == EINTR
            guard accepted >= 0 else { return }
            defer { close(accepted) }
            var buffer = [UInt8](repeating: 0, count: 4_096)
            var count: Int
            repeat { count = read(accepted, &buffer, buffer.count) } while count < 0 && errno == EINTR
            guard count > 0, write(accepted, connack, connack.count) == connack.count else { return }
            connection.withLock { $0 = accepted }
            // Until the client closes its end.
            while true {
                count = read(accepted, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                fromClient.withLock { $0 += buffer.prefix(count) }
            }
            connection.withLock { $0 = -1 }
        }
    }

    /// Writes `bytes` to the client in one call (the connection is made by then).
    func send(_ bytes: [UInt8]) {
        let socket = connection.withLock { $0 }
        precondition(socket >= 0, "the scripted broker has no connection")
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
            precondition(written > 0 || errno == EINTR, "the client took no bytes")
            offset += max(written, 0)
        }
    }

    /// What the client sent after CONNECT, once `done` says it is all there (bounded wait).
    func received(where done: @escaping ([UInt8]) -> Bool) -> [UInt8] {
        waitUntil(timeout: 10) { done(self.fromClient.withLock { $0 }) }
        return fromClient.withLock { $0 }
    }
}
