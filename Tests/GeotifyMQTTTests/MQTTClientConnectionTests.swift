import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import GeotifyTime
import Testing

@Suite("MQTTClient connection", .timeLimit(.minutes(1)), .waiting)
struct MQTTClientConnectionTests {
    @Test("connects to a broker and reports .connected", arguments: [MQTTProtocolVersion.v311, .v5])
    func connects(version: MQTTProtocolVersion) throws {
        let broker = try TestBroker()
        let fixture = try ClientFixture(port: broker.port) { $0.protocolVersion = version }
        #expect(fixture.events.waitForConnected() == false)
        #expect(fixture.client.isConnected)
        fixture.client.stop()
        #expect(!fixture.client.isConnected)
        let disconnect = fixture.events.waitFor { event -> Int? in
            if case .disconnected(let code, _) = event { return code }
            return nil
        }
        #expect(disconnect == 0)
    }

    @Test("a persistent session is reported as present on the next connection")
    func persistentSession() throws {
        let broker = try TestBroker()
        let id = "geotify-persistent-\(UUID().uuidString.prefix(8))"
        let first = try ClientFixture(port: broker.port) { $0.clientID = id; $0.cleanSession = false }
        #expect(first.events.waitForConnected() == false)
        let subscription = try first.client.subscribe(uniqueTopic("session"), qos: 1)
        #expect(first.events.waitForSubscribed(subscription) == [1])
        first.client.stop()

        let second = try ClientFixture(port: broker.port) { $0.clientID = id; $0.cleanSession = false }
        #expect(second.events.waitForConnected() == true)
        second.client.stop()
    }

    @Test("stop() is idempotent and the client can be started again")
    func stopIsIdempotent() throws {
        let broker = try TestBroker()
        let fixture = try ClientFixture(port: broker.port)
        try fixture.waitConnected()
        fixture.client.stop()
        fixture.client.stop()
        let mark = fixture.events.count
        try fixture.client.start()
        #expect(fixture.events.waitForConnected(after: mark) != nil)
        #expect {
            try fixture.client.start()
        } throws: { error in
            (error as? MQTTError)?.message.contains("already started") ?? false
        }
        fixture.client.stop()
    }

    @Test("start() with no broker listening is not an error; it connects once one appears")
    func startBeforeBroker() throws {
        let closed = try ClosedPort()
        let port = closed.port
        let clock = ManualScheduler()
        let fixture = try ClientFixture(port: port, clock: clock)
        #expect(!fixture.client.isConnected)
        // The first attempt fails before the broker exists; the next waits for its backoff.
        #expect(waitUntil { clock.pendingCount == 1 })
        #expect(!fixture.client.isConnected)
        try closed.admitServer()
        let broker = try TestBroker(port: port)
        closed.release()
        clock.advance(by: 3)
        #expect(fixture.events.waitForConnected(timeout: 15) != nil)
        #expect(fixture.client.isConnected)
        fixture.client.stop()
        broker.stop()
    }

    @Test("stop() returns while the client is still trying to reach a missing broker")
    func stopWhileRetrying() throws {
        let clock = ManualScheduler()
        let closed = try ClosedPort()
        defer { withExtendedLifetime(closed) {} }
        let fixture = try ClientFixture(port: closed.port, clock: clock) {
            $0.reconnectDelayMin = 5
            $0.reconnectDelayMax = 30
        }
        #expect(waitUntil { clock.pendingCount == 1 }, "the first attempt failed and the next waits")
        let stopped = DispatchSemaphore(value: 0)
        let client = fixture.client
        Thread.detachNewThread {
            client.stop()
            stopped.signal()
        }
        #expect(stopped.wait(timeout: .now() + 20) == .success)
    }

    @Test("a restarted broker: .disconnected, then .connected again, and publishing works")
    func reconnectsAfterBrokerRestart() throws {
        let broker = try TestBroker()
        let fixture = try ClientFixture(port: broker.port)
        try fixture.waitConnected()
        let mark = fixture.events.count

        try broker.restart()

        let disconnect = fixture.events.waitFor(after: mark) { event -> Int? in
            if case .disconnected(let code, _) = event { return code }
            return nil
        }
        #expect(disconnect != nil && disconnect != 0)
        #expect(fixture.events.waitForConnected(after: mark, timeout: 15) != nil)
        #expect(fixture.client.isConnected)

        let topic = uniqueTopic("after-restart")
        let observer = try TestClient(port: broker.port)
        try observer.subscribe(topic)
        let messageID = try fixture.client.publish(topic: topic, payload: Array("back".utf8), qos: 1, retain: false)
        #expect(fixture.events.waitForPublished(messageID))
        #expect(observer.waitForMessage(on: topic)?.text == "back")
        fixture.client.stop()
    }

    @Test("bad credentials give .connectionRefused with a readable reason", arguments: [
        MQTTProtocolVersion.v311, .v5,
    ])
    func refusedWithBadCredentials(version: MQTTProtocolVersion) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("geotify-passwd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let passwordFile = directory.appendingPathComponent("passwd").path
        try runCommand("mosquitto_passwd", ["-b", "-c", passwordFile, "alice", "right-password"])
        let broker = try TestBroker(extraConfig: "allow_anonymous false\npassword_file \(passwordFile)")

        let refused = try ClientFixture(port: broker.port) {
            $0.protocolVersion = version
            $0.username = "alice"
            $0.password = "wrong-password"
        }
        let refusal = refused.events.waitFor { event -> (Int, String)? in
            if case .connectionRefused(let code, let reason) = event { return (code, reason) }
            return nil
        }
        // The end of the refused attempt follows the refusal (the relay reports it, as
        // it reported the refusal).
        #expect(refused.events.waitFor { event -> Bool? in
            if case .disconnected(let code, _) = event, code != 0 { return true }
            return nil
        } == true, "\(refused.events.all)")
        refused.client.stop()
        let (code, reason) = try #require(refusal, "no refusal: \(refused.events.all)")
        #expect(code != 0)
        #expect(!reason.isEmpty)
        #expect(reason.lowercased().contains("not authori") || reason.lowercased().contains("password"))
        #expect(!refused.client.isConnected)

        let accepted = try ClientFixture(port: broker.port) {
            $0.protocolVersion = version
            $0.username = "alice"
            $0.password = "right-password"
        }
        #expect(accepted.events.waitForConnected() != nil)
        accepted.client.stop()
    }

    @Test("TLS: connects to an mqtts listener trusting its CA, or insecurely without one")
    func tls() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("geotify-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try TestCertificates(in: directory)
        let broker = try TestBroker(extraConfig: certificates.brokerConfig)

        let verified = try ClientFixture(port: broker.port) { $0.tls = MQTTTLS(caFile: certificates.caFile) }
        #expect(verified.events.waitForConnected() != nil)
        verified.client.stop()

        let insecure = try ClientFixture(port: broker.port) { $0.tls = MQTTTLS(insecure: true) }
        #expect(insecure.events.waitForConnected() != nil)
        insecure.client.stop()

        // The system's CAs do not trust the test CA. libmosquitto may fail the handshake
        // inside start() or later on the network thread; either way no connection, and
        // OpenSSL's reason is given.
        do {
            let untrusted = try ClientFixture(port: broker.port) { $0.tls = MQTTTLS() }
            let failure = untrusted.events.waitFor { event -> (Int, String)? in
                if case .disconnected(let code, let reason) = event { return (code, reason) }
                return nil
            }
            #expect(failure?.0 == 8, "expected MOSQ_ERR_TLS: \(untrusted.events.all)")
            #expect(failure?.1.contains("certificate verify failed") == true, "\(untrusted.events.all)")
            #expect(!untrusted.client.isConnected)
            untrusted.client.stop()
        } catch let error as MQTTError {
            #expect(error.code == 8, "expected MOSQ_ERR_TLS, got \(error)")
            #expect(error.message.contains("certificate verify failed"), "\(error)")
        }
    }

    @Test("a client released while connected shuts down cleanly")
    func releaseWhileConnected() throws {
        let broker = try TestBroker()
        var fixture: ClientFixture? = try ClientFixture(port: broker.port)
        try fixture?.waitConnected()
        fixture = nil
        #expect(waitUntil { broker.log.contains("disconnected.") })
    }

    /// A user name goes in CONNECT also without a password (a broker may let a user in
    /// by name alone, or by a client certificate): mosquitto logs it with the connection.
    @Test("a username without a password is sent")
    func usernameWithoutPassword() throws {
        let broker = try TestBroker()
        let fixture = try ClientFixture(port: broker.port) { $0.username = "geotify-bridge" }
        try fixture.waitConnected()
        #expect(waitUntil { broker.log.contains("u'geotify-bridge'") }, "\(broker.log)")
        fixture.client.stop()
    }

    /// A host name that does not resolve is a broker not there yet, not a bad option:
    /// start() returns, the failure is reported as an unknown host, and the client goes
    /// on trying (`geotify status` stops at once with the reason). The name has a label
    /// of 64 letters, one more than DNS allows, which the C library refuses without
    /// asking a name server: the tests talk to 127.0.0.1 only (a name such as
    /// `broker.invalid` is sent to the name server, which may not answer at all).
    @Test("start() with a host name that does not resolve is not an error; the failure is reported as an unknown host")
    func unknownHost() throws {
        let host = String(repeating: "b", count: 64) + ".invalid"
        let fixture = try ClientFixture(port: 1883) { $0.host = host }
        defer { fixture.client.stop() }
        let failure = fixture.events.waitFor { event in
            ConnectionFailure(event, broker: "mqtt://\(host):1883")
        }
        #expect(failure?.kind == .unknownHost, "\(fixture.events.all)")
    }

    /// At most `maximumInFlight` QoS 1 messages go out before their PUBACK, and
    /// libmosquitto holds the rest; a QoS 0 message is not held. 0 is taken as 1, not as
    /// libmosquitto's "no limit".
    @Test("QoS 1 messages in flight are held to maximumInFlight, and 0 is taken as 1", arguments: [(2, 2), (0, 1)])
    func messagesInFlightAreHeldToTheLimit(limit: Int, expected: Int) throws {
        let broker = try SilentBroker()
        defer { broker.stop() }
        let fixture = try ClientFixture(port: broker.port) { $0.maximumInFlight = limit }
        defer { fixture.client.stop() }
        try fixture.waitConnected()
        for index in 0..<4 {
            try fixture.client.publish(topic: "geotify/event/\(index)", payload: [1], qos: 1, retain: false)
        }
        try fixture.client.publish(topic: "geotify/marker", payload: [], qos: 0, retain: false)
        // The QoS 0 marker comes after whatever of the four was not held back.
        #expect(waitUntil { broker.packetHeaders.contains(0x30) })
        #expect(broker.packetHeaders.filter { $0 == 0x32 }.count == expected, "\(broker.packetHeaders)")
    }

    /// A TLS failure on the network thread (here a reconnection: the broker came after
    /// the first attempt) is reported with OpenSSL's reason, as one in start() is; the
    /// code alone says only "A TLS error occurred."
    @Test("a TLS failure of a later attempt is reported with OpenSSL's reason")
    func tlsFailureOfALaterAttemptSaysWhy() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("geotify-tls-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try TestCertificates(in: directory)
        let closed = try ClosedPort()
        let port = closed.port
        let clock = ManualScheduler()
        // The system's CAs do not trust the test CA.
        let fixture = try ClientFixture(port: port, clock: clock) { $0.tls = MQTTTLS() }
        defer { fixture.client.stop() }
        #expect(waitUntil { clock.pendingCount == 1 })
        try closed.admitServer()
        let broker = try TestBroker(extraConfig: certificates.brokerConfig, port: port)
        defer { broker.stop() }
        closed.release()
        let mark = fixture.events.count
        clock.advance(by: 3)
        let failure = fixture.events.waitFor(after: mark) { event -> (Int, String)? in
            if case .disconnected(let code, let reason) = event { return (code, reason) }
            return nil
        }
        #expect(failure?.0 == 8, "expected MOSQ_ERR_TLS: \(fixture.events.all)")
        #expect(failure?.1.contains("certificate verify failed") == true, "\(fixture.events.all)")
    }

    /// A publish an MQTT 5 broker's Maximum Packet Size refuses (libmosquitto's
    /// `MOSQ_ERR_OVERSIZE_PACKET`) is told apart from other failures: nothing was
    /// queued, and the same message would be refused again, so the publisher counts it
    /// as too large rather than as a failed publish.
    @Test("MQTT v5: a message larger than the broker's maximum packet size is refused as oversize")
    func oversizeIsToldApart() throws {
        let broker = try TestBroker(extraConfig: "max_packet_size 1000")
        let fixture = try ClientFixture(port: broker.port) { $0.protocolVersion = .v5 }
        defer { fixture.client.stop() }
        try fixture.waitConnected()
        let topic = uniqueTopic("oversize")
        #expect {
            try fixture.client.publish(topic: topic, payload: Array(repeating: 0x61, count: 2_000), qos: 1, retain: false)
        } throws: { error in
            guard let error = error as? MQTTError else { return false }
            return error.isOversize && !error.isNotConnected && error.keptMessageID == nil
        }
        let fitting = try fixture.client.publish(topic: topic, payload: Array(repeating: 0x61, count: 500), qos: 1, retain: false)
        #expect(fixture.events.waitForPublished(fitting))
    }
}
