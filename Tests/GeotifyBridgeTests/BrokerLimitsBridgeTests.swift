import Foundation
import GeotifyBridge
import GeotifyMQTT
import GeotifyTestSupport
import Testing

/// The bridge against a mosquitto whose own limits or options get in its way (options of
/// mosquitto.conf an operator may set): what the operator sees in the log and in
/// `geotify/stats` must point at the option, not at the network or the client id.
@Suite("Bridge against a broker's limits", .serialized, .timeLimit(.minutes(1)), .waiting)
struct BrokerLimitsBridgeTests {
    /// mosquitto 2.0.11 refuses the bridge's will (`offline`, retained, QoS 1) under
    /// `retain_available false` and under a listener's `max_qos 0`, and tells an MQTT
    /// 3.1.1 client nothing: it closes the connection before any CONNACK. The bridge
    /// logged "cannot reach the broker ...: the connection was lost; retrying", as if the
    /// network had failed, and counted nothing; it now says that the broker closed the
    /// connection unanswered and which options of mosquitto do that, counted under
    /// `errors.connection_refused`, once however often it retries.
    @Test(arguments: ["retain_available false", "max_qos 0"])
    func aConnectionClosedUnansweredOverMQTT311NamesTheBrokersOptions(config: String) throws {
        let broker = try TestBroker(extraConfig: config)
        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-unanswered")
        try bridge.start()
        let counted = { bridge.bridge?.counters.value(.errors(.connectionRefused)) ?? 0 }
        #expect(waitUntil { counted() == 1 }, "\(bridge.logLines.all)")
        #expect(waitUntil { bridge.logLines.all.contains { $0.hasSuffix(Self.closedUnanswered(port: broker.port)) } }, "\(bridge.logLines.all)")
        #expect(bridge.logged("cannot reach").isEmpty, "\(bridge.logLines.all)")
        // Retries that end the same way say nothing more.
        #expect(waitUntil { broker.log.components(separatedBy: "disconnected due to QoS too high or retain not supported").count > 2 })
        #expect(counted() == 1, "\(bridge.logLines.all)")
    }

    /// An MQTT 5 broker that says the session was taken over leaves no doubt: the line
    /// then says nothing of packet sizes.
    @Test func aTakeoverTheBrokerSaidNamesNoPacketSize() {
        let line = Bridge.sessionTakenOver(
            broker: "mqtt://b:1883", clientID: "geotify",
            reason: #"session taken over: another client connected with client id "geotify" and the broker closed this connection (MQTT v5 reason 0x8E)"#)
        #expect(!line.contains("maximumPacketBytes") && line.hasSuffix("(docs/security.md); reconnecting"), "\(line)")
    }

    /// The error line about a connection the broker on `port` closed without answering
    /// CONNECT.
    static func closedUnanswered(port: Int) -> String {
        "error   the broker mqtt://127.0.0.1:\(port) closed the connection without answering CONNECT: a listener that expects TLS (mqtts://) does so, and mosquitto when max_connections is reached or when it refuses the bridge's will (retained, QoS 1: retain_available false, or max_qos 0 on the listener); its log says which; retrying"
    }

    /// A bridge that speaks plain MQTT to a listener that expects TLS (`mqtt://` where
    /// `mqtts://` was meant): mosquitto reads the CONNECT as a TLS handshake that fails and
    /// closes the connection unanswered, as for its own limits; the line names that first.
    @Test func plainMQTTToATLSListenerIsNamedAmongTheCauses() throws {
        let directory = try makeTemporaryDirectory("plain-to-tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try TestCertificates(in: directory)
        let broker = try TestBroker(extraConfig: certificates.brokerConfig)
        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-plain")
        try bridge.start()
        #expect(waitUntil { bridge.bridge?.counters.value(.errors(.connectionRefused)) == 1 }, "\(bridge.logLines.all)")
        #expect(waitUntil { bridge.logLines.all.contains { $0.hasSuffix(Self.closedUnanswered(port: broker.port)) } }, "\(bridge.logLines.all)")
    }
    /// mosquitto closes an MQTT 3.1.1 client's connection, without a word to it, for a
    /// packet larger than its `max_packet_size`; the bridge sends its Home Assistant
    /// configs again at each connection, so the broker closes each soon after accepting
    /// it, which the bridge takes for a session taken over. The line says that the
    /// broker's log tells the two apart, and which setting matches the broker's limit.
    @Test func aPacketLargerThanTheBrokerTakesIsNamedBesideATakeover() throws {
        let broker = try TestBroker(extraConfig: "max_packet_size 700")
        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-oversize") { $0.homeAssistantEnabled = true }
        try bridge.start()
        #expect(waitUntil { bridge.bridge?.counters.value(.errors(.sessionTakenOver)) == 1 }, "\(bridge.logLines.all)")
        #expect(broker.log.contains("Client geotify-oversize disconnected due to oversize packet."))
        #expect(waitUntil {
            bridge.logLines.all.contains {
                $0.hasSuffix(#"as it does when another client connects with the same client id "geotify-oversize" (and, if its log says "oversize packet", when this client sends a packet larger than its max_packet_size). A second bridge with the same clientId, or a broker login that may choose its client id? Give each bridge its own clientId and set use_username_as_clientid in the broker (docs/security.md); if the broker's log says "oversize packet" instead, set maximumPacketBytes to its max_packet_size; reconnecting"#)
            }
        }, "\(bridge.logLines.all)")
    }
}

/// The same over MQTT 5, where mosquitto answers the bridge's will with a CONNACK that
/// says why.
@Suite("Bridge against a broker's limits over MQTT 5", .serialized, .timeLimit(.minutes(1)), .waiting)
struct BrokerLimitsV5BridgeTests {
    /// mosquitto 2.0.11 refuses the CONNECT of an MQTT 5 client whose will it does not
    /// take: 0x9A under `retain_available false`, 0x9B (with Maximum QoS 0) under a
    /// listener's `max_qos 0`. The bridge logged "refused the connection: qoS not
    /// supported (code 155)" and then "cannot reach the broker ...: A network protocol
    /// error occurred ...; retrying"; it now logs one line, with the reason code as MQTT 5
    /// writes it and the option to change.
    @Test(arguments: [
        ("retain_available false", "retain not supported (MQTT v5 reason 0x9A); the bridge's will and status are retained messages: set retain_available true in mosquitto.conf"),
        ("max_qos 0", "QoS not supported (MQTT v5 reason 0x9B); the bridge's will and notifications go at QoS 1: the listener's max_qos must be 1 or more"),
    ])
    func aWillTheBrokerRefusesNamesItsOption(config: String, ending: String) throws {
        let broker = try TestBroker(extraConfig: config)
        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-will-refused") { $0.security.protocolVersion = .v5 }
        try bridge.start()
        let counted = { bridge.bridge?.counters.value(.errors(.connectionRefused)) ?? 0 }
        #expect(waitUntil { counted() == 1 }, "\(bridge.logLines.all)")
        let line = "error   the broker mqtt://127.0.0.1:\(broker.port) refused the connection: " + ending
        #expect(waitUntil { bridge.logLines.all.contains { $0.hasSuffix(line) } }, "\(bridge.logLines.all)")
        // The attempt's end, and retries refused the same way, say nothing more.
        #expect(waitUntil { broker.log.components(separatedBy: "disconnected due to QoS too high or retain not supported").count > 2 })
        #expect(bridge.logLines.all.filter { $0.contains("warning") || $0.contains("error") }.count == 1, "\(bridge.logLines.all)")
    }

    /// An MQTT 5 broker announces its `max_packet_size` in the CONNACK, and libmosquitto
    /// refuses to send a larger packet: the bridge leaves the message out (a Home
    /// Assistant config here), counted and reported, and the line gives the broker's
    /// limit, where it gave the bridge's own `maximumPacketBytes` as the broker's.
    @Test func aPacketLargerThanTheBrokerAnnouncedIsLeftOutWithItsLimit() throws {
        let broker = try TestBroker(extraConfig: "max_packet_size 700")
        let bridge = try Self.startedWithHomeAssistant(on: broker, clientID: "geotify-announced")
        #expect(waitUntil { (bridge.bridge?.counters.value(.errors(.messageTooLarge)) ?? 0) > 0 }, "\(bridge.logLines.all)")
        #expect(waitUntil {
            bridge.logLines.all.contains {
                $0.contains(" bytes, more than the 700 the broker takes (the Maximum Packet Size it announced at the connection; maximumPacketBytes is 262144), which would close the connection for it")
            }
        }, "\(bridge.logLines.all)")
        #expect(bridge.logged("lost the connection").isEmpty && !broker.log.contains("oversize"), "\(bridge.logLines.all)")
    }

    /// mosquitto drops a message whose payload is above its `message_size_limit` and tells
    /// an MQTT 5 client so in the PUBACK of a QoS 1 one (0x95, "Packet too large"; an
    /// MQTT 3.1.1 client gets a plain PUBACK): the line names the option, the bridge's
    /// Home Assistant configs being larger than the limit here.
    @Test func aMessageAboveTheBrokersSizeLimitNamesTheOption() throws {
        let broker = try TestBroker(extraConfig: "message_size_limit 300")
        let bridge = try Self.startedWithHomeAssistant(on: broker, clientID: "geotify-size-limit")
        #expect(waitUntil { (bridge.bridge?.counters.value(.errors(.publishRefused)) ?? 0) > 0 }, "\(bridge.logLines.all)")
        // The count comes before its log line: each line is waited for, not looked for at once.
        #expect(waitUntil {
            bridge.logLines.all.contains {
                $0.contains(": packet too large (MQTT v5 reason 0x95); it is not delivered; the broker takes smaller messages (mosquitto: message_size_limit counts the payload)")
            }
        }, "\(bridge.logLines.all)")
    }

    /// A bridge over MQTT 5 with Home Assistant on (its discovery configs, 400-700 bytes
    /// each and published at QoS 1, are the messages that meet the broker's limits),
    /// started against `broker`.
    static func startedWithHomeAssistant(on broker: TestBroker, clientID: String) throws -> BridgeUnderTest {
        let bridge = try BridgeUnderTest(port: broker.port, clientID: clientID) {
            $0.security.protocolVersion = .v5
            $0.homeAssistantEnabled = true
        }
        try bridge.start()
        return bridge
    }
}
