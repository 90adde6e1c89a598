import Testing
@testable import GeotifyMQTT

/// The topic checks done before every publish, on strings held inline (up to 15 bytes)
/// and on the heap, with the NUL first, in the middle and last.
@Suite("Topic checks")
struct MQTTTopicTests {
    @Test func aNULIsFoundWhereverItIs() {
        for length in [1, 3, 15, 16, 40, 300] {
            let clean = String(repeating: "a", count: length)
            #expect(!MQTTTopic.hasNUL(clean), "length \(length)")
            for position in Set([0, length / 2, length - 1]) {
                var bytes = Array(clean.utf8)
                bytes[position] = 0
                let text = String(decoding: bytes, as: UTF8.self)
                #expect(MQTTTopic.hasNUL(text), "length \(length), NUL at \(position)")
            }
        }
        #expect(!MQTTTopic.hasNUL("geotify/presence/alice/phone/caf\u{E9}"))
    }

    /// A topic or filter of exactly 65 535 bytes (MQTT's 16-bit length) is taken; one
    /// byte more is refused for its length, counted in UTF-8 bytes, in words that say so
    /// (libmosquitto's own check refuses it too, but its error would blame a wildcard).
    @Test func aTopicOfExactlyTheLongestLengthIsTakenAndOneByteMoreIsRefusedForItsLength() throws {
        let longest = String(repeating: "g", count: MQTTTopic.maximumLength)
        try MQTTTopic.checkName(longest, operation: "publish")
        try MQTTTopic.checkFilter(longest, operation: "subscribe")
        for tooLong in [longest + "g", String(repeating: "\u{E9}", count: 32_768)] {
            #expect {
                try MQTTTopic.checkName(tooLong, operation: "publish")
            } throws: { error in
                (error as? MQTTError)?.message == "the topic is 65536 bytes long; MQTT allows 65535"
            }
            #expect {
                try MQTTTopic.checkFilter(tooLong, operation: "subscribe")
            } throws: { error in
                (error as? MQTTError)?.message == "the filter is 65536 bytes long; MQTT allows 65535"
            }
        }
    }
}
