import Foundation
@testable import GeotifyBridge
import GeotifyMQTT
import GeotifyTestSupport
import Testing

/// A client allowed to publish to a topic the bridge reads can send it a message of up
/// to 256 MiB, which the bridge took whole (held by libmosquitto as it read it, then
/// copied) before it could refuse it as too large. Over MQTT 5 the bridge tells the broker
/// the largest packet it takes (`Settings.largestIncomingPacketBytes`), and mosquitto
/// drops a larger message for it instead of sending it; MQTT 3.1.1 has no way to say it,
/// so there the bridge reads such a message without its payload, dropping the payload's
/// bytes as they come, and refuses it (docs/security.md).
@Suite("The largest packet the bridge takes from the broker", .serialized, .timeLimit(.minutes(1)), .waiting)
struct IncomingPacketLimitBridgeTests {
    let away = (52.50, 13.405)
    let home = (52.52, 13.405)

    /// The limit told the broker: the payload limit with 256 KiB more, at least the
    /// bridge's own largest packet, at most what MQTT carries, even for a payload limit
    /// no message could reach.
    @Test func theLargestPacketFollowsThePayloadAndPacketLimits() {
        var settings = Settings()
        #expect(settings.largestIncomingPacketBytes == 65_536 + 262_144)
        settings.maximumPacketBytes = 1 << 20
        #expect(settings.largestIncomingPacketBytes == 1 << 20)
        settings.maximumPayloadBytes = Int.max
        #expect(settings.largestIncomingPacketBytes == Settings.largestPacketBytes)
    }

    /// Past the bridge's largest packet: over MQTT 5 mosquitto drops the message for the
    /// bridge ("Dropping too large outgoing PUBLISH"), over MQTT 3.1.1 it comes, is read
    /// without its payload and refused (`payload_too_large`, saying it was not read). One
    /// past `maximumPayloadBytes` but within the packet comes either way, and is refused
    /// with its error report; a position after both brings its notification, and an empty
    /// payload after that its report, after the others'. (Over TLS: MQTTClientTLSCutTests.)
    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func aMessageLargerThanTheBridgeTakesIsNotTakenWhole(version: MQTTProtocolVersion) throws {
        let harness = try BridgeHarness {
            $0.security.protocolVersion = version
            $0.maximumPayloadBytes = 1_024
        }
        defer { harness.stopBridge() }
        let largest = harness.settings.largestIncomingPacketBytes
        #expect(largest == 262_144 + 1_024, "maximumPayloadBytes with 256 KiB for the rest: more than maximumPacketBytes")
        try harness.observer.publish("geotify/location/van/7", bytes: Array(repeating: UInt8(ascii: "x"), count: largest))
        try harness.observer.publish("geotify/location/van/7", bytes: Array(repeating: UInt8(ascii: "y"), count: 2_048))
        try harness.ownTracks("alice/phone", away.0, away.1, tst: 0)
        try harness.ownTracks("alice/phone", home.0, home.1, tst: 60)
        #expect(harness.events("alice/phone", count: 1).first?["event"] as? String == "enter")
        // Refused last, so that its report comes after any the large ones brought.
        try harness.observer.publish("geotify/location/van/7", bytes: [])
        let refused = version == .v5 ? 1 : 2
        let errors = harness.observer.waitForMessages(on: "geotify/error", count: refused + 1).map(\.text)
        #expect(errors.count == refused + 1 && errors.last?.contains("empty_payload") == true, "\(errors)")
        #expect(errors.dropLast().allSatisfy { $0.contains("payload_too_large") }, "\(errors)")
        // Over MQTT 3.1.1 the large one was read without its payload.
        let unread = errors.filter { $0.contains("its packet is larger than the bridge takes, so it was not read") }
        #expect(unread.count == (version == .v5 ? 0 : 1), "\(errors)")
        #expect(harness.bridge?.counters.value(.errors(.payloadTooLarge)) == refused)
        let dropped = harness.broker.log.contains("Dropping too large outgoing PUBLISH for geotify-test")
        #expect(dropped == (version == .v5), "\(harness.broker.log.suffix(2_000))")
    }
}
