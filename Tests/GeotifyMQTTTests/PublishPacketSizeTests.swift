import Testing
@testable import GeotifyMQTT

/// The size of a PUBLISH packet, counted byte by byte as MQTT 5 §3.3 lays it out: what
/// the publisher compares with the broker's largest packet, so a miscount of one byte
/// lets through a message the broker closes the connection for.
@Suite("PublishPacketSize")
struct PublishPacketSizeTests {
    /// QoS 0: the fixed header's byte and remaining length, the topic with its two-byte
    /// length, the properties' length (one byte, also under 3.1.1) and the payload; QoS 1
    /// and 2 add the packet id's two bytes.
    @Test func aPacketCountsItsHeaderTopicPacketIDPropertiesLengthAndPayload() {
        // 1 + 1 + (2 + 5 + 1 + 10)
        #expect(PublishPacketSize.of(topicBytes: 5, payloadBytes: 10, qos: 0) == 20)
        #expect(PublishPacketSize.of(topicBytes: 5, payloadBytes: 10, qos: 1) == 22)
        #expect(PublishPacketSize.of(topicBytes: 5, payloadBytes: 10, qos: 2) == 22)
    }

    /// Correlation data is a property: its identifier byte, its two-byte length and its
    /// bytes, inside the properties' length.
    @Test func correlationDataCountsItsIdentifierAndLength() {
        // 1 + 1 + (2 + 5 + 2 + 1 + (1 + 2 + 4) + 10)
        #expect(PublishPacketSize.of(topicBytes: 5, payloadBytes: 10, qos: 1, correlationDataBytes: 4) == 29)
        #expect(PublishPacketSize.of(topicBytes: 5, payloadBytes: 10, qos: 1, correlationDataBytes: 0) == 25)
    }

    /// The remaining length takes a byte for every seven bits: 127 fits one byte, 128
    /// takes two, 16 384 three, 2 097 152 four.
    @Test func theRemainingLengthTakesAByteForEverySevenBits() {
        let bytes = [0, 1, 127, 128, 255, 256, 16_383, 16_384, 2_097_151, 2_097_152, 268_435_455]
            .map(PublishPacketSize.lengthBytes)
        #expect(bytes == [1, 1, 1, 2, 2, 2, 2, 3, 3, 4, 4])
        // A remaining length of 127, then of 128: the second packet is two bytes longer.
        #expect(PublishPacketSize.of(topicBytes: 5, payloadBytes: 119, qos: 0) == 1 + 1 + 127)
        #expect(PublishPacketSize.of(topicBytes: 5, payloadBytes: 120, qos: 0) == 1 + 2 + 128)
    }
}
