import Testing
import GeotifyJSON

@Suite("JSON writer")
struct JSONWriterTests {
    @Test func compactOutputKeepsMemberOrder() {
        let value: JSON = ["device": "alice/phone", "badge": 3, "lat": 52.52, "acc": nil, "ok": true]
        #expect(JSONWriter().string(value) == #"{"device":"alice/phone","badge":3,"lat":52.52,"acc":null,"ok":true}"#)
    }

    @Test func prettySortedOutputIsStable() {
        let value: JSON = ["b": [1, 2], "a": ["z": 1.5, "y": [], "x": [:]]]
        let text = JSONWriter(pretty: true, sortedKeys: true).string(value)
        #expect(text == """
            {
              "a": {
                "x": {},
                "y": [],
                "z": 1.5
              },
              "b": [
                1,
                2
              ]
            }

            """)
    }

    /// The quote, the backslash and every control character are escaped: the five with a
    /// short escape by it, the others as `\u00XX` in lower-case hex (U+001A, with a digit
    /// past 9, as `\u001a`); U+007F and U+0020 are not.
    @Test func escapesWhatJSONRequires() {
        #expect(JSONWriter().string("a\"b\\c\n\u{01}é") == #""a\"b\\c\n\u0001é""#)
        #expect(JSONWriter().string("\u{08}\u{0C}\r\t\u{0B}\u{1A}\u{1F} \u{7F}") == #""\b\f\r\t\u000b\u001a\u001f \#u{7F}""#)
    }

    /// Every string comes back whole through the parser, whatever it holds and wherever:
    /// the writer copies the runs between escapes, so an escape at either end, two in a
    /// row, or none at all must each be right. Strings of the characters that need
    /// escapes, plain ASCII, multi-byte scalars and small (inline) and large lengths.
    @Test func everyStringRoundTrips() throws {
        let alphabet: [Character] = ["\"", "\\", "\n", "\r", "\t", "\u{08}", "\u{0C}", "\u{00}", "\u{01}", "\u{1F}", "\u{7F}", "a", "Z", "/", " ", "é", "€", "😀"]
        var generator = SystemRandomNumberGenerator()
        var texts = ["", "plain", "\"", "\\\\", "\u{01}x", "x\n", String(repeating: "a", count: 300)]
        for _ in 0..<2_000 {
            let length = Int.random(in: 0...40, using: &generator)
            texts.append(String((0..<length).map { _ in alphabet.randomElement(using: &generator)! }))
        }
        for text in texts {
            let written = JSONWriter().string(.string(text))
            #expect(try JSONParser().parse(written).stringValue == text, "\(written)")
            #expect(!written.utf8.dropFirst().dropLast().contains { $0 < 0x20 }, "no raw control character: \(written)")
        }
    }

    @Test func numbersRoundTrip() throws {
        for number in [0.1, -13.405, 52.520008, 1e-7, 1_700_000_000, 1e300, -0.0, 123456789.125] {
            let text = JSONWriter().string(.number(number))
            #expect(try JSONParser().parse(text).numberValue == number, "\(text)")
        }
        #expect(JSONWriter().string(.number(.nan)) == "null")
    }

    @Test func parseWriteParseIsIdentity() throws {
        let text = #"{"devices":{"alice/phone":[{"identifier":"home","latitude":52.52,"note":"Welcome \"home\""}]}}"#
        let value = try JSONParser().parse(text)
        #expect(try JSONParser().parse(JSONWriter(pretty: true).string(value)) == value)
        #expect(JSONWriter().string(value) == text)
    }
}
