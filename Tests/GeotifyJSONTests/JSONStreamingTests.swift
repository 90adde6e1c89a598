import Testing
@testable import GeotifyJSON

/// `parse(_:streamingMembersOf:_:)`: each member of the streamed object reaches the
/// visitor, the tree keeps an empty object in its place, and every text gets exactly the
/// value or the error `parse(_:)` gives.
@Suite("JSON parser, streaming one member")
struct JSONStreamingTests {
    private struct Visit: Equatable {
        var name: String
        var value: JSON
        var objectLine: Int
        var occurrence: Int
    }

    private func stream(_ text: String, parser: JSONParser = JSONParser()) throws(JSONError) -> (JSON, [Visit]) {
        var visits: [Visit] = []
        let tree = try parser.parse(Array(text.utf8), streamingMembersOf: "devices") { member in
            visits.append(Visit(name: member.name, value: member.value, objectLine: member.objectLine, occurrence: member.occurrence))
        }
        return (tree, visits)
    }

    @Test("the streamed object's members reach the visitor in order, and the tree keeps an empty object with its line")
    func membersAreVisited() throws {
        let text = "{\"groups\": {\"g\": [1]},\n \"devices\": {\n\"a\": [1, 2], \"b\": {\"x\": true}, \"a\": []}}"
        let (tree, visits) = try stream(text)
        #expect(visits == [
            Visit(name: "a", value: [1, 2], objectLine: 2, occurrence: 0),
            Visit(name: "b", value: .object(JSONObject([JSONObject.Member(key: "x", value: true)], line: 3)), objectLine: 2, occurrence: 0),
            Visit(name: "a", value: [], objectLine: 2, occurrence: 0),
        ])
        #expect(tree["groups"] == .object(JSONObject([JSONObject.Member(key: "g", value: [1])], line: 1)))
        #expect(tree["devices"] == .object(JSONObject([], line: 2)))
        #expect(tree.objectValue?.members.count == 2)
    }

    @Test("each object named by the key is streamed with its occurrence; a value that is not an object stays in the tree")
    func occurrences() throws {
        let (tree, visits) = try stream(#"{"devices": {"a": 1}, "devices": 7, "devices": {}, "devices": {"b": 2}}"#)
        #expect(visits.map(\.occurrence) == [0, 2])
        #expect(visits.map(\.name) == ["a", "b"])
        #expect(tree.objectValue?.members.map(\.value) == [.object(JSONObject([], line: 1)), 7, .object(JSONObject([], line: 1)), .object(JSONObject([], line: 1))])
    }

    @Test("a key nested deeper, or a document that is not an object, is not streamed")
    func onlyTheTopLevel() throws {
        let nested = try stream(#"{"x": {"devices": {"a": 1}}}"#)
        #expect(nested.1.isEmpty)
        #expect(nested.0 == (try JSONParser().parse(#"{"x": {"devices": {"a": 1}}}"#)))
        let array = try stream(#"[{"devices": {"a": 1}}]"#)
        #expect(array.1.isEmpty)
    }

    @Test("every text gives the value or the error plain parsing gives", arguments: [
        "", "  ", "{", "{\"devices\": {", "{\"devices\": {\"a\": [1,]}}", "{\"devices\": {\"a\" 1}}",
        "{\"devices\": {\"a\": 1,}}", "{\"devices\": {\"a\": 1} x", "{\"devices\": {a: 1}}", "{\"devices\": {\"a\": 1}\n,}",
        "{\"devices\": {\"a\": \"\\u12\"}}", "{\"devices\": {\"a\": 1}}  ", "{\"a\": 1, \"devices\": {\"b\": [[[]]]}}",
        "{\"devices\" {}}", "{\"devices\": {\"a\": 1}, }", "{\"devices\": {\"a\": 1} \"b\": 2}", "{\"devices\": {}}",
        "{\"dev\\u0069ces\": {\"a\": 1}}", "{}", "[1, 2]", "\"devices\"", "{\"devices\": {\"a\": 1}}}",
    ])
    func sameOutcomeAsPlainParsing(text: String) {
        let plain = Result { () throws(JSONError) in try JSONParser().parse(Array(text.utf8)) }
        let streamed = Result { () throws(JSONError) in try stream(text).0 }
        switch (plain, streamed) {
        case (.failure(let expected), .failure(let got)):
            #expect(got == expected)
        case (.success, .success(let tree)):
            // The tree is the plain one with each object named "devices" at the top emptied.
            guard case .success(var expected) = plain else { return }
            if case .object(var root) = expected {
                for index in root.members.indices where root.members[index].key == "devices" {
                    if case .object(let object) = root.members[index].value {
                        root.members[index].value = .object(JSONObject([], line: object.line))
                    }
                }
                expected = .object(root)
            }
            #expect(tree == expected)
        default:
            Issue.record("plain: \(plain), streamed: \(streamed)")
        }
    }

    @Test("nesting deeper than the limit inside the streamed object is refused as plain parsing refuses it")
    func depthLimit() {
        let parser = JSONParser(maxDepth: 3)
        let text = #"{"devices": {"a": [[1]]}}"#
        let plain = Result { () throws(JSONError) in try parser.parse(Array(text.utf8)) }
        let streamed = Result { () throws(JSONError) in try stream(text, parser: parser).0 }
        guard case .failure(let expected) = plain, case .failure(let got) = streamed else {
            Issue.record("both should fail: \(plain), \(streamed)")
            return
        }
        #expect(got == expected)
    }

    @Test("refusing duplicate members, the tree is checked whole and its members handed over the same way")
    func rejectingDuplicates() throws {
        let parser = JSONParser(rejectingDuplicateMembers: true)
        let (tree, visits) = try stream(#"{"devices": {"a": 1, "b": 2}}"#, parser: parser)
        #expect(visits.map(\.name) == ["a", "b"])
        #expect(tree["devices"] == .object(JSONObject([], line: 1)))
        #expect(throws: JSONError.self) { try stream(#"{"devices": {"a": 1, "a": 2}}"#, parser: parser) }
    }
}
