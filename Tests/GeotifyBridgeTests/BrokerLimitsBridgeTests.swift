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
        let line = "error   the broker mqtt://127.0.0.1:\(broker.port) closed the connection without answering CONNECT, as mosquitto does when max_connections is reached or when it refuses the bridge's will (retained, QoS 1: retain_available false, or max_qos 0 on the listener); its log says which; retrying"
        #expect(bridge.logLines.all.contains { $0.hasSuffix(line) }, "\(bridge.logLines.all)")
        #expect(bridge.logged("cannot reach").isEmpty, "\(bridge.logLines.all)")
        // Retries that end the same way say nothing more.
        #expect(waitUntil { broker.log.components(separatedBy: "disconnected due to QoS too high or retain not supported").count > 2 })
        #expect(counted() == 1, "\(bridge.logLines.all)")
    }
}
