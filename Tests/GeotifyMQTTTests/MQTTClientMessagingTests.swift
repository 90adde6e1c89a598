import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import Testing

@Suite("MQTTClient messaging", .timeLimit(.minutes(1)), .waiting)
struct MQTTClientMessagingTests {
    @Test("binary payloads round-trip at QoS 0 and 1, from empty to 1 MiB", arguments: [0, 1])
    func roundTrip(qos: Int) throws {
        let broker = try TestBroker()
        let topic = uniqueTopic("round-trip")
        let payloads: [[UInt8]] = [[], [0, 1, 2, 0, 255, 254, 0], Array("héllo".utf8), randomBytes(1 << 20)]

        let receiver = try ClientFixture(port: broker.port)
        try receiver.waitConnected()
        let subscription = try receiver.client.subscribe(topic, qos: qos)
        #expect(receiver.events.waitForSubscribed(subscription) == [qos])

        let sender = try ClientFixture(port: broker.port)
        try sender.waitConnected()
        var messageIDs: [Int32] = []
        for payload in payloads {
            messageIDs.append(try sender.client.publish(topic: topic, payload: payload, qos: qos, retain: false))
        }
        #expect(Set(messageIDs).count == payloads.count)
        for messageID in messageIDs {
            #expect(sender.events.waitForPublished(messageID))
        }

        #expect(waitUntil { receiver.events.messages.count >= payloads.count })
        let received = receiver.events.messages
        try #require(received.count == payloads.count)
        for (message, payload) in zip(received, payloads) {
            #expect(message.topic == topic)
            #expect(message.payload == payload)
            #expect(message.qos == qos)
            #expect(!message.retain)
            #expect(message.responseTopic == nil)
            #expect(message.correlationData == nil)
        }
        sender.client.stop()
        receiver.client.stop()
    }

    @Test("a QoS 1 PUBACK is reported as .published with the id publish returned")
    func pubackReported() throws {
        let broker = try TestBroker()
        let fixture = try ClientFixture(port: broker.port)
        try fixture.waitConnected()
        let first = try fixture.client.publish(topic: uniqueTopic("puback"), payload: [1], qos: 1, retain: false)
        let second = try fixture.client.publish(topic: uniqueTopic("puback"), payload: [2], qos: 1, retain: false)
        #expect(first != second)
        #expect(fixture.events.waitForPublished(first))
        #expect(fixture.events.waitForPublished(second))
        #expect(broker.log.contains("Received PUBLISH from"))
        fixture.client.stop()
    }

    /// An MQTT 5 broker that takes a QoS 1 message and refuses it (its access rules:
    /// mosquitto's dynamic-security plugin) says so in the PUBACK, 0x87; that is reported
    /// as `.publishRefused`, not as `.published`, and a message it lets through as before.
    @Test("an MQTT 5 PUBACK refusing a message is reported as .publishRefused with the broker's reason")
    func pubackRefusalReported() throws {
        let directory = try makeTemporaryDirectory("puback-refused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let security = try BrokerDynamicSecurity(
            path: directory.appendingPathComponent("dynamic-security.json").path, user: "writer", password: "secret",
            rules: [.publish("#"), .refusePublishing("denied/#")])
        let broker = try TestBroker(extraConfig: security.brokerConfig)
        let fixture = try ClientFixture(port: broker.port) {
            $0.protocolVersion = .v5
            $0.username = "writer"
            $0.password = "secret"
        }
        defer { fixture.client.stop() }
        try fixture.waitConnected()
        let refused = try fixture.client.publish(topic: "denied/\(uniqueTopic("puback"))", payload: [1], qos: 1, retain: false)
        let taken = try fixture.client.publish(topic: uniqueTopic("puback"), payload: [2], qos: 1, retain: false)
        #expect(fixture.events.waitForPublished(taken))
        let refusal = fixture.events.waitFor { event -> (Int32, Int, String)? in
            guard case .publishRefused(let id, let code, let reason) = event else { return nil }
            return (id, code, reason)
        }
        #expect(refusal?.0 == refused && refusal?.1 == 0x87 && refusal?.2 == "Not authorized", "\(fixture.events.all)")
        #expect(!fixture.events.all.contains { if case .published(refused) = $0 { true } else { false } })
    }

    @Test("a retained message reaches a later subscriber, flagged as retained")
    func retained() throws {
        let broker = try TestBroker()
        let topic = uniqueTopic("retained")
        let publisher = try ClientFixture(port: broker.port)
        try publisher.waitConnected()
        let messageID = try publisher.client.publish(topic: topic, payload: Array("kept".utf8), qos: 1, retain: true)
        #expect(publisher.events.waitForPublished(messageID))
        publisher.client.stop()

        let late = try TestClient(port: broker.port)
        try late.subscribe(topic)
        let message = late.waitForMessage(on: topic)
        #expect(message?.text == "kept")
        #expect(message?.retain == true)
    }

    @Test("a wildcard subscription receives matching topics")
    func wildcard() throws {
        let broker = try TestBroker()
        let base = uniqueTopic("wildcard")
        let receiver = try TestClient(port: broker.port)
        try receiver.subscribe("\(base)/+/state")
        let sender = try TestClient(port: broker.port)
        try sender.publish("\(base)/a/state", "a")
        try sender.publish("\(base)/b/other", "ignored")
        try sender.publish("\(base)/c/state", "c")
        let messages = receiver.waitForMessages(on: "\(base)/+/state", count: 2)
        #expect(messages.map(\.text) == ["a", "c"])
        // The broker keeps one publisher's order: had `b/other` been delivered, it would
        // have come before `c`.
        #expect(receiver.messages.filter { $0.topic.hasPrefix(base) }.map(\.text) == ["a", "c"])
    }

    @Test("MQTT v5: response topic and correlation data round-trip between two clients")
    func v5RequestResponse() throws {
        let broker = try TestBroker()
        let requests = uniqueTopic("requests")
        let replies = uniqueTopic("replies")
        let correlation: [UInt8] = [0, 1, 2, 255, 0x42]

        let responder = try TestClient(port: broker.port, protocolVersion: .v5)
        try responder.subscribe(requests)
        let requester = try TestClient(port: broker.port, protocolVersion: .v5)
        try requester.subscribe(replies)
        let plain = try TestClient(port: broker.port, protocolVersion: .v311)
        try plain.subscribe(requests)

        try requester.publish(
            requests, bytes: Array("ping".utf8), correlationData: correlation, responseTopic: replies
        )
        let request = try #require(responder.waitForMessage(on: requests))
        #expect(request.text == "ping")
        #expect(request.responseTopic == replies)
        #expect(request.correlationData == correlation)

        let plainRequest = try #require(plain.waitForMessage(on: requests))
        #expect(plainRequest.text == "ping")
        #expect(plainRequest.responseTopic == nil)
        #expect(plainRequest.correlationData == nil)

        try responder.publish(
            try #require(request.responseTopic), bytes: Array("pong".utf8), correlationData: request.correlationData
        )
        let reply = try #require(requester.waitForMessage(on: replies))
        #expect(reply.text == "pong")
        #expect(reply.correlationData == correlation)
        #expect(reply.responseTopic == nil)

        try requester.publish(requests, bytes: [7], correlationData: [])
        let empty = responder.waitForMessages(on: requests, count: 2).last
        #expect(empty?.payload == [7])
        #expect(empty?.correlationData == [])
    }

    /// The properties' limits are checked before libmosquitto: correlation data of
    /// 65 535 bytes (its two-byte length's most) goes out and arrives whole, 65 536 bytes
    /// are refused; a response topic is a topic name, so a wildcard in it is refused (a
    /// broker would close the connection for it).
    @Test("MQTT v5: correlation data of 65535 bytes goes out whole; 65536 bytes and a response topic with a wildcard are refused")
    func v5PropertyLimits() throws {
        let broker = try TestBroker()
        let topic = uniqueTopic("correlation")
        let receiver = try TestClient(port: broker.port, protocolVersion: .v5)
        try receiver.subscribe(topic)
        let fixture = try ClientFixture(port: broker.port) { $0.protocolVersion = .v5 }
        defer { fixture.client.stop() }
        try fixture.waitConnected()
        let longest = (0..<65_535).map { UInt8(truncatingIfNeeded: $0) }
        try fixture.client.publish(topic: topic, payload: [1], qos: 1, retain: false, correlationData: longest)
        #expect(receiver.waitForMessage(on: topic)?.correlationData == longest)
        #expect {
            try fixture.client.publish(topic: topic, payload: [2], qos: 1, retain: false, correlationData: longest + [0])
        } throws: { error in
            (error as? MQTTError)?.message == "correlation data is 65536 bytes; MQTT allows 65535"
        }
        #expect {
            try fixture.client.publish(topic: topic, payload: [3], qos: 1, retain: false, responseTopic: "geotify/reply/+")
        } throws: { error in
            guard let error = error as? MQTTError else { return false }
            return error.operation == "add a response topic" && error.message.contains("must not contain the wildcards")
        }
    }

    @Test("bad topics, filters and QoS are refused with specific messages")
    func badArguments() throws {
        let broker = try TestBroker()
        let fixture = try ClientFixture(port: broker.port)
        try fixture.waitConnected()
        let client = fixture.client
        let cases: [(String, () throws -> Void)] = [
            ("wildcards", { _ = try client.publish(topic: "a/+", payload: [], qos: 0, retain: false) }),
            ("topic is empty", { _ = try client.publish(topic: "", payload: [], qos: 0, retain: false) }),
            ("QoS 3", { _ = try client.publish(topic: "a", payload: [], qos: 3, retain: false) }),
            ("NUL", { _ = try client.publish(topic: "a\u{0}b", payload: [], qos: 0, retain: false) }),
            ("wildcard wrongly", { _ = try client.subscribe("a/#/b", qos: 0) }),
            ("wildcard wrongly", { _ = try client.subscribe("a+", qos: 0) }),
            ("filter is empty", { _ = try client.subscribe("", qos: 0) }),
            ("QoS -1", { _ = try client.subscribe("a", qos: -1) }),
            ("QoS 3", { _ = try client.subscribe("a", qos: 3) }),
            ("filter is empty", { _ = try client.unsubscribe("") }),
            ("wildcard wrongly", { _ = try client.unsubscribe("a/#/b") }),
        ]
        for (expectedText, call) in cases {
            #expect {
                try call()
            } throws: { error in
                (error as? MQTTError)?.message.contains(expectedText) ?? false
            }
        }
        fixture.client.stop()
    }

    @Test("publishing or subscribing without a connection fails with MOSQ_ERR_NO_CONN", arguments: [0, 1])
    func publishWhileDisconnected(qos: Int) throws {
        // A QoS 0 message is gone: the caller keeps it and tries again after
        // `.connected`. A QoS 1 message libmosquitto has queued (its id in the error).
        let closed = try ClosedPort()
        defer { withExtendedLifetime(closed) {} }
        let fixture = try ClientFixture(port: closed.port)
        let topic = uniqueTopic("offline")
        #expect {
            try fixture.client.publish(topic: topic, payload: [1], qos: qos, retain: false)
        } throws: { error in
            (error as? MQTTError)?.code == 4 && ((error as? MQTTError)?.keptMessageID != nil) == (qos > 0)
        }
        #expect {
            try fixture.client.subscribe(topic, qos: qos)
        } throws: { error in
            (error as? MQTTError)?.code == 4
        }
        fixture.client.stop()
    }

    /// libmosquitto 2.0.11 queues a QoS 1 message before it tries to write it, and
    /// sends what it holds once connected: the message a publish without a connection
    /// refused still arrives, and its acknowledgement carries the id the error gave.
    @Test func aQoS1MessageRefusedWithoutAConnectionIsSentOnConnecting() throws {
        let closed = try ClosedPort()
        let port = closed.port
        let fixture = try ClientFixture(port: port)
        defer { fixture.client.stop() }
        let topic = uniqueTopic("kept")
        var kept: Int32?
        do {
            try fixture.client.publish(topic: topic, payload: Array("kept".utf8), qos: 1, retain: true)
        } catch {
            kept = error.keptMessageID
        }
        let messageID = try #require(kept)
        try closed.admitServer()
        let broker = try TestBroker(port: port)
        defer { broker.stop() }
        closed.release()
        #expect(fixture.events.waitForPublished(messageID, timeout: 15))
        let observer = try TestClient(port: port)
        try observer.subscribe(topic)
        #expect(observer.waitForMessage(on: topic)?.text == "kept")
    }
}
