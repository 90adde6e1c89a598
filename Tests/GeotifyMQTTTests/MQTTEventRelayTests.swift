import Testing
@testable import GeotifyMQTT

/// How the relay words why a connection ended: libmosquitto's own codes are below 0x80,
/// an MQTT 5 broker's DISCONNECT reason codes from 0x80 up.
@Suite("MQTTEventRelay")
struct MQTTEventRelayTests {
    /// 0x80, the first of MQTT 5's failure codes ("Unspecified error"), is read as a
    /// reason code, as 0x8E (session taken over) is; 0x7F is libmosquitto's.
    @Test func disconnectReasonCodesFrom0x80AreMQTT5Reasons() {
        #expect(MQTTEventRelay.reason(disconnect: 0x80) == "Unspecified error")
        #expect(MQTTEventRelay.reason(disconnect: 0x8E) == "Session taken over")
        #expect(MQTTEventRelay.reason(disconnect: 7) == "The connection was lost.")
        #expect(MQTTEventRelay.reason(disconnect: 0) == "disconnected on request")
    }

    /// A PUBACK's reason below 0x80 is a success (0x10: no subscriber matched), from
    /// 0x80 up a refusal, carrying libmosquitto's words for it.
    @Test func pubackReasonsFrom0x80AreRefusals() {
        guard case .published(7) = MQTTEventRelay.published(messageID: 7, reasonCode: 0x10) else {
            Issue.record("0x10 is a success")
            return
        }
        guard case .published(7) = MQTTEventRelay.published(messageID: 7, reasonCode: 0x7F) else {
            Issue.record("0x7F is below the failures")
            return
        }
        guard case .publishRefused(7, 0x80, "Unspecified error") = MQTTEventRelay.published(messageID: 7, reasonCode: 0x80) else {
            Issue.record("0x80 is the first failure")
            return
        }
    }
}
