import GeotifyHTTP
import Testing

struct PercentDecodingTests {
    /// `text` decoded, and whether it holds a control character.
    func decoded(_ text: String) -> (bytes: [UInt8], control: Bool) {
        let result = decodedWithFlaw(text)
        return (result.bytes, result.flaw == .controlCharacter)
    }

    /// `text` decoded, and its flaw.
    func decodedWithFlaw(_ text: String) -> (bytes: [UInt8], flaw: PercentDecoding.Flaw?) {
        var bytes = Array(text.utf8)
        let result = bytes.withUnsafeMutableBufferPointer { PercentDecoding.decode($0) }
        return (Array(bytes.prefix(result.count)), result.flaw)
    }

    @Test func escapesDecodeAsLibmicrohttpdsOwnAndANULDoesNotEndTheText() {
        #expect(decoded("/a%2Fb%20c+d").bytes == Array("/a/b c+d".utf8))
        #expect(decoded("caf%C3%a9").bytes == Array("café".utf8))
        #expect(decoded("%zz%4%").bytes == Array("%zz%4%".utf8), "a % without two hex digits stays")
        #expect(decoded("%2500").bytes == Array("%00".utf8), "decoded once")
        #expect(decoded("").bytes.isEmpty)
        #expect(decoded("a%00b") == ([0x61, 0, 0x62], true))
    }

    /// An escape cut short by the end of the buffer stays as it is, whatever follows the
    /// buffer in memory: the decoder reads nothing past its end (here a hex digit that
    /// would complete the escape).
    @Test func anEscapeCutShortByTheBuffersEndIsNotCompletedFromBeyondIt() {
        var storage = Array("a%41".utf8)
        let result = storage.withUnsafeMutableBufferPointer { whole in
            PercentDecoding.decode(UnsafeMutableBufferPointer(rebasing: whole[0..<3]))
        }
        #expect(result.count == 3 && result.flaw == nil)
        #expect(storage == Array("a%41".utf8))
    }

    @Test func everyASCIIControlCharacterIsFoundAndNothingElse() {
        for byte in UInt8(0)...0xFF {
            let hex = String(byte, radix: 16, uppercase: true)
            let escape = decoded("x%\(hex.count == 1 ? "0" : "")\(hex)")
            #expect(escape.bytes == [UInt8(ascii: "x"), byte])
            #expect(escape.control == (byte < 0x20 || byte == 0x7F), "%\(hex)")
            #expect(decodedWithFlaw("x%\(hex.count == 1 ? "0" : "")\(hex)").flaw == (byte < 0x20 || byte == 0x7F ? .controlCharacter : byte >= 0x80 ? .notUTF8 : nil),
                    "a lone byte past ASCII is not UTF-8: %\(hex)")
        }
        var raw: [UInt8] = [UInt8(ascii: "a"), 0x09, UInt8(ascii: "b")]
        #expect(raw.withUnsafeMutableBufferPointer { PercentDecoding.decode($0) } == (3, .controlCharacter), "sent raw")
        #expect(!decoded("/h%C3%A9llo?%C2%85").control, "U+0085 is a character, not an ASCII control")
    }

    /// Swift's `String` made each malformed sequence U+FFFD, so `/api/devices/%FF` and
    /// `/api/devices/%FE` named one device; whatever is not UTF-8 once decoded is a flaw.
    @Test func bytesThatAreNotUTF8AreFoundEscapedOrRaw() {
        for malformed in ["%FF", "%C3", "%C3%28", "%C0%AF", "%E0%80%AF", "%ED%A0%80", "%F4%90%80%80", "%F8%88%80%80%80", "caf%C3%A9%A9"] {
            #expect(decodedWithFlaw("/api/devices/\(malformed)").flaw == .notUTF8, "\(malformed)")
        }
        for wellFormed in ["caf%C3%A9", "%E2%82%AC", "%F0%9F%98%80", "%EF%BF%BD", "%F4%8F%BF%BF", "a%2Fb", ""] {
            #expect(decodedWithFlaw("/api/devices/\(wellFormed)").flaw == nil, "\(wellFormed)")
        }
        var raw: [UInt8] = [UInt8(ascii: "a"), 0xFF, UInt8(ascii: "b")]
        #expect(raw.withUnsafeMutableBufferPointer { PercentDecoding.decode($0) } == (3, .notUTF8), "sent raw")
        #expect(decodedWithFlaw("%FF%00").flaw == .controlCharacter, "a control character is named first")
    }

    /// libmicrohttpd reads hex digits in either case, so `%2f` is `%2F`: every byte
    /// escaped in lower case decodes as it does in upper case.
    @Test func lowerCaseEscapesDecodeAsUpperCaseOnes() {
        for byte in UInt8(0)...0xFF {
            let hex = String(byte, radix: 16, uppercase: false)
            let escape = "x%\(hex.count == 1 ? "0" : "")\(hex)"
            #expect(decodedWithFlaw(escape).bytes == [UInt8(ascii: "x"), byte], "\(escape)")
            #expect(decodedWithFlaw(escape).flaw == decodedWithFlaw(escape.uppercased()).flaw, "\(escape)")
        }
    }
}
