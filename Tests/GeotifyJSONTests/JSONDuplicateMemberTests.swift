import GeotifyJSON
import Testing

/// `rejectingDuplicateMembers`: a name given twice in one object is refused wherever the
/// object is, built or skipped, however the name is spelled; different names never are.
@Suite("JSON duplicate members")
struct JSONDuplicateMemberTests {
    let strict = JSONParser(rejectingDuplicateMembers: true)
    let keys = JSONParser.MemberNames(["lat", "lon"])

    /// The error refusing `text`, parsed whole or (`visiting`) as the location decoder
    /// reads it, handed only the members named in `keys`.
    func refusal(_ text: String, visiting: Bool = false) -> JSONError? {
        do {
            _ = visiting ? try strict.parse(Array(text.utf8), visitingMembers: keys) { _, _ in } : try strict.parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func aNameGivenTwiceIsRefusedWithTheNameAndWhereItIs() {
        let error = refusal(#"{"lat": 1, "lon": 2, "lat": 3}"#)
        #expect(error == JSONError(line: 1, column: 22, reason: #"the member "lat" appears more than once in one object"#, duplicateMember: "lat"))
        #expect(refusal(#"{"lat": 1, "lon": 2, "lat": 3}"#, visiting: true)?.duplicateMember == "lat")
    }

    @Test(arguments: [
        #"{"batt": 1, "lat": 2, "batt": 3}"#,
        #"{"a": {"x": 1, "x": 2}}"#,
        #"{"a": [{"x": 1}, {"y": 1, "y": 2}]}"#,
        #"{"l\u0061t": 1, "lat": 2}"#,
        #"{"lat": 1, "\u006cat": 2}"#,
        #"{"Zürich": 1, "Z\u00fcrich": 2}"#,
        #"{"a-very-long-member-name-beyond-fifteen": 1, "a-very-long-member-name-beyond-fifteen": 2}"#,
    ])
    func everySpellingAndEveryObjectCounts(text: String) {
        #expect(refusal(text)?.duplicateMember != nil, "\(text)")
        #expect(refusal(text, visiting: true)?.duplicateMember != nil, "\(text)")
    }

    @Test func namesThatOnlyLookAlikeAreNotDuplicates() throws {
        // Same length, first and last byte: the summaries match, the names do not.
        let text = #"{"tat": 1, "tot": 2, "t\u0075t": 3, "a-long-name-number-one-x": 4, "a-long-name-number-two-x": 5, "x": {"tat": 1}}"#
        #expect(refusal(text) == nil)
        #expect(refusal(text, visiting: true) == nil)
        #expect(try JSONParser().parse(#"{"a": 1, "a": 2}"#)["a"] == 2)
    }

    /// Thousands of different member names of one kind (`namesThatShareASummaryCostLinearWork`).
    enum ManyNames: CaseIterable {
        /// The same length, first and last byte: one summary for them all.
        case oneSummary
        /// Ordinary names, "n0" to "n2999": about forty summaries.
        case numbered
        /// Escaped, so that the decoded names are summed up and hashed.
        case escaped

        func name(_ index: Int) -> String {
            switch self {
            case .oneSummary: "a" + String(repeating: "0", count: 4 - String(index).count) + "\(index)a"
            case .numbered: "n\(index)"
            case .escaped: "\\u0061\(index)"
            }
        }
    }

    @Test(arguments: ManyNames.allCases)
    func namesThatShareASummaryCostLinearWork(names: ManyNames) throws {
        // A 64 KiB payload holds thousands of members. Once past the 32 the list keeps,
        // each name is compared only with names of its hash: at most the list's
        // 32 × 31 / 2 pairs in all. Compared with every name of its summary, these
        // took millions of comparisons, a second of CPU for one MQTT message.
        let members = (0..<3_000).map { "\"\(names.name($0))\": \($0)" }
        let text = Array(("{" + members.joined(separator: ", ") + "}").utf8)
        let comparisons = try strict.nameComparisons(parsing: text)
        #expect(comparisons <= 32 * 31 / 2)
        if names == .oneSummary {
            #expect(comparisons == 32 * 31 / 2, "the list's 32 names of one summary are each compared with the others")
        }
        let repeated = Array(("{" + (members + [members[2_500]]).joined(separator: ", ") + "}").utf8)
        #expect(refusal(String(decoding: repeated, as: UTF8.self))?.duplicateMember != nil)
        #expect(refusal(String(decoding: repeated, as: UTF8.self), visiting: true)?.duplicateMember != nil)
    }

    @Test func manyMembersAreCheckedAllTheWay() {
        let members = (0..<3_000).map { "\"member\($0)\": \($0)" }
        let clean = "{" + members.joined(separator: ", ") + "}"
        #expect(refusal(clean) == nil)
        #expect(refusal(clean, visiting: true) == nil)
        let late = "{" + (members + [#""member7": 0"#]).joined(separator: ", ") + "}"
        #expect(refusal(late)?.duplicateMember == "member7")
        #expect(refusal(late, visiting: true)?.duplicateMember == "member7")
        // Past the list too, every spelling counts (names are found by the hash of what
        // they decode to), and so does the first member, which follows '{' not ' '.
        for (repeated, name) in [(#""m\u0065mber7": 0"#, "member7"), (#""member0": 0"#, "member0")] {
            let text = "{" + (members + [repeated]).joined(separator: ", ") + "}"
            #expect(refusal(text)?.duplicateMember == name, "\(repeated)")
            #expect(refusal(text, visiting: true)?.duplicateMember == name, "\(repeated)")
        }
        let early = "{" + (Array(members.prefix(5)) + [#""member2": 0"#]).joined(separator: ", ") + "}"
        #expect(refusal(early, visiting: true)?.duplicateMember == "member2")
    }
}
