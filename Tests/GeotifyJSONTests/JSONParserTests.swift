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

    @Test func numbersReadBackExactly() throws {
        let samples = ["52.5200", "13.4050", "-0.000123", "1700000000", "0", "-0",
                       "179.99999999999997", "1.7976931348623157e308", "5e-324", "123456789012345678901234"]
        for text in samples {
            let parsed = try parser.parse(text).numberValue
            #expect(parsed == Double(text), "\(text)")
        }
    }

    @Test func stringEscapesAndUnicode() throws {
        #expect(try parser.parse(#""\u00e9\ud83d\ude00\/\t""#) == "é😀/\t")
        #expect(try parser.parse("\"Zürich 東京\"") == "Zürich 東京")
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
        ("{} x", "line 1, column 4: unexpected character 'x' after the JSON value"),
        ("tru", "line 1, column 1: unexpected end of text in 'true'"),
    ])
    func reportsWhereAndWhy(text: String, message: String) {
        #expect(throws: JSONError.self) { try parser.parse(text) }
        do {
            _ = try parser.parse(text)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func refusesInvalidUTF8() {
        #expect(throws: JSONError.self) { try parser.parse([0x22, 0xC3, 0x28, 0x22]) }
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
