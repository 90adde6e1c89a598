import Foundation
@testable import GeotifyBridge
import GeotifyMQTT
import GeotifyTestSupport
import Testing

/// The broker keeps the bridge's session while the bridge is away (a restart, a crash):
/// the positions published meanwhile at QoS 1 are queued for it and evaluated when it
/// is back, over MQTT 3.1.1 (`cleanSession` false) and MQTT 5 alike. Over MQTT 5 that
/// takes a Session Expiry Interval in CONNECT (`MQTTClient.keepSessionWhileAway`):
/// without it mosquitto ended the session with the connection and the position was lost.
@Suite("Positions queued while the bridge is away", .serialized, .timeLimit(.minutes(1)), .waiting)
struct SessionQueueBridgeTests {
    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func positionsPublishedWhileTheBridgeIsStoppedArriveAfterItsRestart(version: MQTTProtocolVersion) throws {
        let harness = try BridgeHarness { $0.security.protocolVersion = version }
        try harness.observer.publish("geotify/location/van/7", #"{"lat": 48.0, "lon": 11.0, "tst": \#(harness.base)}"#, qos: 1)
        #expect(waitUntil { harness.bridge?.counters.value(.fixesEvaluated) == 1 })
        harness.stopBridge()
        // The van reaches its depot while the bridge is stopped.
        try harness.observer.publish(
            "geotify/location/van/7", #"{"lat": 48.1374, "lon": 11.5755, "acc": 20, "tst": \#(harness.base + 300)}"#, qos: 1)
        try harness.startBridge()
        #expect(harness.events("van/7", count: 1).first?["event"] as? String == "enter", "\(harness.logLines.all.suffix(10))")
        harness.stopBridge()
    }
}
