import GeotifyHTTP
import Testing

struct PercentDecodingTests {
    /// `text` decoded, and whether it holds a control character.
    func decoded(_ text: String) -> (bytes: [UInt8], control: Bool) {
        var bytes = Array(text.utf8)
        let result = bytes.withUnsafeMutableBufferPointer { PercentDecoding.decode($0) }
        return (Array(bytes.prefix(result.count)), result.hasControlCharacter)
    }

    @Test func escapesDecodeAsLibmicrohttpdsOwnAndANULDoesNotEndTheText() {
        #expect(decoded("/a%2Fb%20c+d").bytes == Array("/a/b c+d".utf8))
        #expect(decoded("caf%C3%a9").bytes == Array("café".utf8))
        #expect(decoded("%zz%4%").bytes == Array("%zz%4%".utf8), "a % without two hex digits stays")
        #expect(decoded("%2500").bytes == Array("%00".utf8), "decoded once")
        #expect(decoded("").bytes.isEmpty)
        #expect(decoded("a%00b") == ([0x61, 0, 0x62], true))
    }

    @Test func everyASCIIControlCharacterIsFoundAndNothingElse() {
        for byte in UInt8(0)...0xFF {
            let hex = String(byte, radix: 16, uppercase: true)
            let escape = decoded("x%\(hex.count == 1 ? "0" : "")\(hex)")
            #expect(escape.bytes == [UInt8(ascii: "x"), byte])
            #expect(escape.control == (byte < 0x20 || byte == 0x7F), "%\(hex)")
        }
        var raw: [UInt8] = [UInt8(ascii: "a"), 0x09, UInt8(ascii: "b")]
        #expect(raw.withUnsafeMutableBufferPointer { PercentDecoding.decode($0) } == (3, true), "sent raw")
        #expect(!decoded("/h%C3%A9llo?%C2%85").control, "U+0085 is a character, not an ASCII control")
    }
}
