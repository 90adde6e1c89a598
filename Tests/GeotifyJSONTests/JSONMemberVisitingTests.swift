import GeotifyTestSupport
import Testing
@testable import GeotifyJSON

/// `parse(_:visitingMembers:_:)`, the location decoder's path: for every text it hands
/// over exactly the members of those names that `parse(_:)` builds, with their positions
/// among the names, or throws exactly its error, though it skips the other members
/// without building them.
@Suite("JSON parser, visiting members")
struct JSONMemberVisitingTests {
    static let names = ["_type", "lat", "lon", "acc", "tst"]
    static let keys = JSONParser.MemberNames(names)

    /// What visiting gives for `text`: the members as an object (named by their
    /// positions), or the value that is not an object, or the error.
    private func visited(_ text: [UInt8], parser: JSONParser) -> Result<JSON, JSONError> {
        var members: [JSONObject.Member] = []
        return Result { () throws(JSONError) -> JSON in
            let whole = try parser.parse(text, visitingMembers: Self.keys) { slot, value in
                members.append(JSONObject.Member(key: Self.names[slot], value: value))
            }
            return whole ?? .object(JSONObject(members))
        }
    }

    /// What parsing `text` whole gives, with an object's members cut down to those named
    /// in `names`.
    private func kept(_ text: [UInt8], parser: JSONParser) -> Result<JSON, JSONError> {
        Result { () throws(JSONError) -> JSON in
            let whole = try parser.parse(text)
            guard case .object(let object) = whole else { return whole }
            return .object(JSONObject(object.members.filter { Self.names.contains($0.key) }))
        }
    }

    /// Expects visiting to give what parsing whole gives; returns whether the text parsed.
    @discardableResult
    private func expectSameOutcome(_ text: [UInt8], parser: JSONParser) -> Bool {
        let expected = kept(text, parser: parser)
        let got = visited(text, parser: parser)
        switch (expected, got) {
        case (.failure(let expected), .failure(let got)):
            #expect(got == expected, "\(String(decoding: text, as: UTF8.self))")
        case (.success(let expected), .success(let got)):
            // JSONObject's equality ignores the line, which visiting does not give.
            #expect(got == expected, "\(String(decoding: text, as: UTF8.self))")
        default:
            Issue.record("kept: \(expected), visited: \(got), for \(String(decoding: text, as: UTF8.self))")
        }
        if case .success = expected { return true }
        return false
    }

    @Test("each kept member is handed over once, with the position of its name, in written order")
    func membersAndSlots() throws {
        var seen: [(Int, JSON)] = []
        let text = #"{"tst": 1700000000, "batt": 80, "l\u0061t": 52.5, "inregions": ["a"], "_type": "location", "lon": 13.4}"#
        let whole = try JSONParser(rejectingDuplicateMembers: true).parse(Array(text.utf8), visitingMembers: Self.keys) { seen.append(($0, $1)) }
        #expect(whole == nil)
        #expect(seen.map(\.0) == [4, 1, 0, 2])
        #expect(seen.map(\.1) == [1_700_000_000, 52.5, "location", 13.4])
    }

    @Test("every text gives the members or the error parsing whole gives", arguments: [
        "", "  ", "{", "}", "{}", "[]", "[1, {\"lat\": 1}]", "\"lat\"", "7", "null", "{\"lat\": 1}} ",
        "{\"lat\": 1, \"lat\": 2}", "{\"x\": 1, \"x\": 2}", "{\"l\\u0061t\": 1, \"lat\": 2}", "{\"lat\": 1,}",
        "{\"lat\" 1}", "{lat: 1}", "{\"lat\": [1, 2, {\"a\": {}}], \"lon\": {\"lat\": 3}}", "{\"lat\": 01}",
        "{\"lat\": \"\\ud800\"}", "{\"_type\": \"location\", \"lat\": 1e400}", "{\"a\": [[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]}",
        "{\"Zürich\": 1, \"lon\": -0.0}", "{\"lat\": 1}\n\n x", "{\"lat\": tru}", "{\"lat\": \"\u{01}\"}",
        // Strings that start with an escape, a name's and a skipped value's.
        #"{"\"": 1, "lat": 2}"#, #"{"\\": 1, "lat": 2}"#, #"{"x": "\"quoted\"", "lat": 3}"#, #"{"x": "\\", "lat": 4}"#,
    ])
    func sameOutcomeAsParsingWhole(text: String) {
        expectSameOutcome(Array(text.utf8), parser: JSONParser(maxDepth: 16, rejectingDuplicateMembers: true))
        expectSameOutcome(Array(text.utf8), parser: JSONParser())
    }

    @Test("a location payload changed at random, 20 000 times, gives the members or the error parsing whole gives")
    func mutatedPayloads() {
        let payload = Array(#"{"_type":"location","acc":12,"alt":40,"batt":71,"bs":1,"conn":"w","lat":52.520008,"lon":13.404954,"tid":"ph","tst":1700000000,"vac":3,"vel":0,"inregions":["home"],"desc":"Caf\u00e9"}"#.utf8)
        let alphabet = Array(#"{}[]",:0123456789.eE+-truefalsn\ "#.utf8) + [0x00, 0x0A, 0xFF, 0xC3, 0xA4]
        let parsers = [JSONParser(maxDepth: 16, rejectingDuplicateMembers: true), JSONParser(maxDepth: 2)]
        var generator = SplitMix64(seed: 11)
        var parsed = 0
        for _ in 0..<20_000 {
            let text = RandomEdits.edited(payload, alphabet: alphabet, maximum: 4, &generator)
            for parser in parsers where expectSameOutcome(text, parser: parser) { parsed += 1 }
        }
        // Both outcomes are compared many times over: the mutations are neither all fatal nor all harmless.
        #expect(parsed > 2_000 && parsed < 38_000, "\(parsed) of 40 000 parsed")
    }
}
