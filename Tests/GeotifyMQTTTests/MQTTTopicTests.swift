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
}
