import Testing
import GeotifyTestSupport
@testable import GeotifyJSON

@Suite("JSON parser")
struct JSONParserTests {
    let parser = JSONParser()

    @Test func parsesEveryKindOfValue() throws {
        let value = try parser.parse(#"{"a": [1, -2.5, 3e2, true, false, null], "b": "x\ny", "c": {}}"#)
        #expect(value["a"] == [1, -2.5, 300, true, false, nil])
        #expect(value["b"] == "x\ny")
        #expect(value["c"] == .object(JSONObject()))
    }

    /// A text cut anywhere, placed at the very end of readable memory (`PageEndBuffer`):
    /// none of the parser's three readings (the tree, the members visited, the members
    /// streamed) reads past the end (the test would crash), with duplicate names refused
    /// or not, and each answers as it does for the same bytes anywhere else.
    @Test func noTextCutAnywhereIsReadPastItsEnd() {
        let buffer = PageEndBuffer()
        let text = Array(#" {"devices": {"a/b": [{"id": "x", "r": -1.5e+3, "ok": true, "n": null, "f": false}], "c\u00e9": "\"\\\/\b\f\n\r\t\ud83d\ude00é"}, "list": [ 1 , [ ], { } ], "z": 0.25E-2 } "#.utf8)
        let keys = JSONParser.MemberNames(["devices", "z"])
        func outcome(_ read: () throws -> Any?) -> String {
            do { return "\(String(describing: try read()))" } catch { return "\(error)" }
        }
        for rejecting in [false, true] {
            let parser = JSONParser(maxDepth: 16, rejectingDuplicateMembers: rejecting)
            for end in 0...text.count {
                let cut = Array(text[..<end])
                let what = "\(String(decoding: cut, as: UTF8.self)), rejecting duplicates: \(rejecting)"
                #expect(outcome { try buffer.with(cut) { try parser.parse($0) } } == outcome { try parser.parse(cut) }, "\(what)")
                var visited: [String] = []
                var visitedHere: [String] = []
                #expect(outcome { try buffer.with(cut) { try parser.parse($0, visitingMembers: keys) { visited.append("\($0) \($1)") } } }
                        == outcome { try parser.parse(cut, visitingMembers: keys) { visitedHere.append("\($0) \($1)") } }, "\(what)")
                #expect(visited == visitedHere, "\(what)")
                var streamed: [String] = []
                var streamedHere: [String] = []
                #expect(outcome { try buffer.with(cut) { try parser.parse($0, streamingMembersOf: "devices") { streamed.append("\($0)") } } }
                        == outcome { try parser.parse(cut, streamingMembersOf: "devices") { streamedHere.append("\($0)") } }, "\(what)")
                #expect(streamed == streamedHere, "\(what)")
            }
        }
    }

    @Test func numbersReadBackExactly() throws {
        let samples = ["52.5200", "13.4050", "-0.000123", "1700000000", "0", "-0",
                       "179.99999999999997", "1.7976931348623157e308", "5e-324", "123456789012345678901234",
                       // More than 15 digits, or an exponent past 22, leave the fast path:
                       // its product would be rounded twice (these two wrongly), or its
                       // table of powers of ten end.
                       "95142426273599.37", "136671.33367510755", "1e22", "1e23", "1e-22", "1e-23", "1e100", "1E+100", "2e-400"]
        for text in samples {
            let parsed = try parser.parse(text).numberValue
            #expect(parsed == Double(text), "\(text)")
        }
    }

    @Test func stringEscapesAndUnicode() throws {
        #expect(try parser.parse(#""\u00e9\ud83d\ude00\/\t""#) == "é😀/\t")
        #expect(try parser.parse(#""\u00C9\u00c9\uABCD\uDBFF\uDFFF""#) == "ÉÉ\u{ABCD}\u{10FFFF}", "upper-case hex, and the last surrogate pair")
        #expect(try parser.parse("\"Zürich 東京\"") == "Zürich 東京")
    }

    /// A literal at the very end of the text is read (the bound is its end, not one byte
    /// before), and a carriage return is whitespace, so a file saved with CRLF line ends
    /// reads and counts its lines by the LF.
    @Test func literalsAtTheEndAndCRLFLineEnds() throws {
        #expect(try parser.parse("true") == true && parser.parse("false") == false && parser.parse("null") == .null)
        let value = try parser.parse("{\r\n  \"a\": [true,\r\nnull],\r\n  \"b\": {\"c\": false}\r\n}\r\n")
        #expect(value["a"] == [true, nil] && value["b"]?.objectValue?.line == 4)
    }

    /// Depth is given back when an array or object closes, empty or not: siblings never add
    /// up, so a document two deep is read at `maxDepth` 2 however many siblings it has.
    @Test func closedSiblingsGiveTheirDepthBack() throws {
        let shallow = JSONParser(maxDepth: 2)
        let siblings = #"[[], [1], {}, {"a": 1}, [], [2], {}, {"b": 2}]"#
        #expect(try shallow.parse(siblings).arrayValue?.count == 8)
        #expect(try JSONParser(maxDepth: 3).parse(#"{"x": \#(siblings), "y": \#(siblings)}"#)["y"]?.arrayValue?.count == 8)
        var visited = 0
        _ = try shallow.parse(Array(#"{"x": [], "z": [1], "y": {}, "w": {"a": 1}, "keep": 1, "v": [], "u": {}}"#.utf8),
                              visitingMembers: JSONParser.MemberNames(["keep"])) { _, _ in visited += 1 }
        #expect(visited == 1, "skipped members give their depth back too")
    }

    @Test func objectsRememberTheirLine() throws {
        let value = try parser.parse("{\n  \"a\": {\n    \"b\": 1\n  }\n}")
        #expect(value.objectValue?.line == 1)
        #expect(value["a"]?.objectValue?.line == 2)
    }

    @Test func duplicateKeysAreKeptAndTheLastWins() throws {
        let object = try #require(try parser.parse(#"{"a": 1, "b": 2, "a": 3}"#).objectValue)
        #expect(object["a"] == 3)
        #expect(object.duplicateKeys == ["a"])
    }

    /// Setting a key replaces every member of that name with one at the end, and setting
    /// it to nil removes them all: an object built in code never names a key twice.
    @Test func settingAKeyReplacesAndNilRemoves() throws {
        var object = try #require(try parser.parse(#"{"a": 1, "b": 2, "a": 3}"#).objectValue)
        object["a"] = 4
        #expect(object.keys == ["b", "a"] && object["a"] == 4)
        object["b"] = nil
        #expect(object.keys == ["a"] && object["b"] == nil)
    }

    @Test(arguments: [
        ("", "line 1, column 1: the text is empty, expected a JSON value"),
        ("not json", "line 1, column 1: unexpected character 'n', expected a JSON value"),
        ("{\"a\": 1,}", "line 1, column 9: unexpected character '}', expected a member name in double quotes"),
        ("[1 2]", "line 1, column 4: unexpected character '2', expected ',' or ']'"),
        ("{\"a\" 1}", "line 1, column 6: unexpected character '1', expected ':' after the member name \"a\""),
        ("{\n\"a\": 01}", "line 2, column 7: a number must not start with a leading zero"),
        ("\"abc", "line 1, column 5: unterminated string"),
        ("\"a\u{01}\"", "line 1, column 3: unescaped control character in a string"),
        ("\"\\x\"", "line 1, column 3: invalid escape '\\x' in a string"),
        ("1.", "line 1, column 3: a number needs a digit after '.'"),
        ("-", "line 1, column 2: a number needs a digit after '-'"),
        ("1e999", "line 1, column 1: the number 1e999 is out of range"),
        ("NaN", "line 1, column 1: unexpected character 'N', expected a JSON value"),
        // The printable ASCII characters by themselves, from '!' to '~'; the others by their byte.
        ("!", "line 1, column 1: unexpected character '!', expected a JSON value"),
        ("[~]", "line 1, column 2: unexpected character '~', expected a JSON value"),
        ("[\u{7F}]", "line 1, column 2: unexpected byte 0x7F, expected a JSON value"),
        ("[\u{0C}]", "line 1, column 2: unexpected byte 0xC, expected a JSON value"),
        ("{} x", "line 1, column 4: unexpected character 'x' after the JSON value"),
        ("tru", "line 1, column 1: unexpected end of text in 'true'"),
        ("{\"a\": 1", "line 1, column 8: unexpected end of text, expected ',' or '}'"),
        ("[1", "line 1, column 3: unexpected end of text, expected ',' or ']'"),
        ("{\"a\"", "line 1, column 5: unexpected end of text, expected ':' after the member name \"a\""),
        ("[trux]", "line 1, column 2: unexpected character 't', expected a JSON value"),
        ("[1,]", "line 1, column 4: unexpected character ']', expected a JSON value"),
        ("\"a\u{1F}\"", "line 1, column 3: unescaped control character in a string"),
        ("\"\\n\u{1F}\"", "line 1, column 4: unescaped control character in a string"),
        (#""\uDC00""#, "line 1, column 8: a lone low surrogate in a \\u escape"),
        (#""\uD800\uE000""#, "line 1, column 14: invalid low surrogate in a \\u escape"),
        // A \u escape cut short by the end of the text; one whole at the end, with the
        // string's end missing after it.
        (#""\u004"#, "line 1, column 4: unterminated \\u escape"),
        (#""\u0041"#, "line 1, column 8: unterminated string"),
        // A high surrogate followed by `\u` at the very end is cut short in that second
        // escape, not missing its low surrogate.
        (#""\uD83D\u"#, "line 1, column 10: unterminated \\u escape"),
        (#""\uD83D\"#, "line 1, column 8: a \\u escape of a high surrogate is not followed by a low surrogate"),
    ])
    func reportsWhereAndWhy(text: String, message: String) {
        #expect(throws: JSONError.self) { try parser.parse(text) }
        do {
            _ = try parser.parse(text)
        } catch {
            #expect(error.description == message)
        }
    }

    /// Text that is not UTF-8 is refused wherever it is: in a string read whole, from its
    /// first byte that is not ASCII (0x80, a lone continuation byte), and in a member that
    /// is skipped unread; so is a control character in a skipped member's name or value.
    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONError.self) { try parser.parse([0x22, 0xC3, 0x28, 0x22]) }
        #expect(throws: JSONError.self) { try parser.parse([0x22, 0x80, 0x22]) }
        let keep = JSONParser.MemberNames(["keep"])
        for skipped: [UInt8] in [[0x22, 0x80, 0x22], [0x22, 0x1F, 0x22]] {
            let asValue = Array(#"{"other": "#.utf8) + skipped + Array(#", "keep": 1}"#.utf8)
            let asName = Array("{".utf8) + skipped + Array(#": 1, "keep": 1}"#.utf8)
            for text in [asValue, asName] {
                #expect(throws: JSONError.self, "\(text)") { try parser.parse(text, visitingMembers: keep) { _, _ in } }
            }
        }
    }

    @Test func nestingIsBounded() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        do {
            _ = try parser.parse(deep)
            Issue.record("a 100 000-deep document was accepted")
        } catch {
            #expect(error.reason == "nesting deeper than 64 levels")
        }
        #expect((try? parser.parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64))) != nil)
    }

    @Test func randomBytesNeverCrash() {
        var generator = SplitMix64(seed: 42)
        for _ in 0..<20_000 {
            let length = Int(generator.next() % 40)
            let alphabet = Array(#"{}[]",:0123456789.eE+-truefalsn\ "#.utf8) + [0x00, 0xFF, 0xC3]
            let bytes = (0..<length).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            _ = try? parser.parse(bytes)
        }
    }
}
