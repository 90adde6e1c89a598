import GeotifyTestSupport
import Testing
@testable import GeotifyJSON

/// `FlatObjectScan`, the location decoder's first reading: it takes only flat objects of
/// plain members, and whatever it takes, the parser takes with the same values for the
/// same names; everything else it leaves to the parser (nil).
@Suite("JSON flat object scan")
struct FlatObjectScanTests {
    static let names = ["_type", "lat", "lon", "acc", "tst", "ok", "none"]
    static let keys = JSONParser.MemberNames(names)

    private func scan(_ text: String) -> FlatObjectScan? {
        scan(Array(text.utf8))
    }

    private func scan(_ bytes: [UInt8]) -> FlatObjectScan? {
        bytes.withUnsafeBufferPointer { FlatObjectScan.scan($0, keeping: Self.keys) }
    }

    /// The scan keeps at most `maximumKept` names: with that many it reads the last one's
    /// value, and with one more it leaves the text to the parser (its values have no
    /// place for a ninth).
    @Test func moreNamesThanItKeepsAreLeftToTheParser() throws {
        let names = (0...FlatObjectScan.maximumKept).map { "n\($0)" }
        let text = Array(("{" + names.map { "\"\($0)\": 1" }.joined(separator: ", ") + "}").utf8)
        let most = JSONParser.MemberNames(Array(names.prefix(FlatObjectScan.maximumKept)))
        let scanned = try #require(text.withUnsafeBufferPointer { FlatObjectScan.scan($0, keeping: most) })
        #expect(scanned.values[FlatObjectScan.maximumKept - 1] == .number(1))
        #expect(text.withUnsafeBufferPointer { FlatObjectScan.scan($0, keeping: JSONParser.MemberNames(names)) } == nil)
    }

    /// The scan's values as the parser hands them over: each kept name's value by its
    /// position among the names.
    private func asJSON(_ scanned: FlatObjectScan, _ bytes: [UInt8]) -> [Int: JSON] {
        var values: [Int: JSON] = [:]
        for slot in Self.names.indices {
            values[slot] = scanned.values[slot]?.json(in: bytes)
        }
        return values
    }

    /// What the parser hands over for `bytes`, or nil when it refuses them or they are
    /// not an object.
    private func visited(_ bytes: [UInt8]) -> [Int: JSON]? {
        var values: [Int: JSON] = [:]
        let parser = JSONParser(maxDepth: 16, rejectingDuplicateMembers: true)
        do {
            // nil: an object, whose members were handed over.
            guard try parser.parse(bytes, visitingMembers: Self.keys, { values[$0] = $1 }) == nil else { return nil }
            return values
        } catch {
            return nil
        }
    }

    /// Expects that what the scan takes the parser takes, with the same values; returns
    /// whether the scan took it.
    @discardableResult
    private func expectParserAgrees(_ bytes: [UInt8]) -> Bool {
        guard let scanned = scan(bytes) else { return false }
        let text = String(decoding: bytes, as: UTF8.self)
        guard let parsed = visited(bytes) else {
            Issue.record("the scan took what the parser refuses: \(text)")
            return true
        }
        #expect(asJSON(scanned, bytes) == parsed, "\(text)")
        return true
    }

    @Test("a location's kept members, by the position of their names; the others skipped")
    func keptMembers() throws {
        let text = #" { "tid":"ph", "lat" : 52.520008,"lon":-13.4e0 ,"_type":"location","batt":80,"ok":true,"none":null,"t":"u","tst":1700000000 } "#
        let scanned = try #require(scan(text))
        let values = asJSON(scanned, Array(text.utf8))
        #expect(values == [0: "location", 1: 52.520008, 2: -13.4, 4: 1_700_000_000, 5: true, 6: .null])
        #expect(scanned.values[3] == nil)
        #expect(try #require(scan("{}")).values[0] == nil)
        #expect(try #require(scan(#"{"ok":false}"#)).values[5] == .bool(false))
    }

    /// Each of these is either not JSON, or JSON the scan does not read itself: the
    /// parser judges it.
    @Test("anything but a flat object of plain members is left to the parser", arguments: [
        "", " ", "{", "}", "[]", "7", #""lat""#, "null", #"{"lat": 1}}"#, #"{"lat": 1} x"#, #"{"lat": 1,}"#, #"{"lat" 1}"#,
        "{lat: 1}", #"{"lat": [1]}"#, #"{"lat": {}}"#, #"{"l\u0061t": 1}"#, #"{"lat": "a\"b"}"#, #"{"Zürich": 1}"#,
        #"{"lat": "é"}"#, "{\"lat\": \"\u{01}\"}", #"{"lat": 01}"#, #"{"lat": 1.}"#, #"{"lat": -}"#, #"{"lat": 1e}"#,
        #"{"lat": 1e400}"#, #"{"lat": tru}"#, #"{"lat": nul}"#, #"{"lat": 1, "lat": 2}"#, #"{"x": 1, "y": 2, "x": 3}"#,
        #"{"lat": +1}"#, #"{"lat": .5}"#, #"{"lat": 1"#, #"{"lat": "1"#, #"{"lat""#, #"{"lat":"#, #"{"lat": "#,
        #"{"tst": 1, "lat": "#, "{\"lat\":\u{0B}1}",
    ])
    func leftToTheParser(text: String) {
        #expect(scan(text) == nil, "\(text)")
    }

    /// A byte past ASCII in a string, a value's or a name's, leaves the text to the
    /// parser, from the first such byte (0x80, a UTF-8 continuation byte that is never
    /// valid alone, which the parser refuses) up; 0x7F is ASCII, and JSON takes it
    /// unescaped.
    @Test func aByteFromTheFirstPastASCIIUpIsLeftToTheParser() throws {
        for byte: UInt8 in [0x80, 0xBF, 0xC3, 0xFF] {
            let value = Array(#"{"lat": "a"#.utf8) + [byte] + Array(#""}"#.utf8)
            let name = Array(#"{"l"#.utf8) + [byte] + Array(#"": 1}"#.utf8)
            #expect(scan(value) == nil, "\(byte) in a value")
            #expect(scan(name) == nil, "\(byte) in a name")
        }
        #expect(throws: JSONError.self) { try JSONParser().parse(Array(#"{"lat": "a"#.utf8) + [0x80] + Array(#""}"#.utf8)) }
        #expect(try #require(scan(Array(#"{"lat": "a"#.utf8) + [0x7F] + Array(#""}"#.utf8))).values[1] == .string(9..<11))
        #expect(try #require(scan(Array(#"{"l"#.utf8) + [0x7F] + Array(#"": 1, "lat": 2}"#.utf8))).values[1] == .number(2))
    }

    /// A text cut anywhere, placed at the very end of readable memory (`PageEndBuffer`):
    /// the scan never reads past the end (the test would crash), and answers as it does
    /// for the same bytes anywhere else.
    @Test func noTextCutAnywhereIsReadPastItsEnd() {
        let buffer = PageEndBuffer()
        let payloads = [
            #" { "_type":"location","lat" : 52.5,"lon":-13.4e0 ,"ok":true,"none":null,"f":false,"inregions":["home", 7, true, null],"t":"u" } "#,
            #"{"x":[],"lat":1}"#,
        ]
        for payload in payloads.map({ Array($0.utf8) }) {
            for end in 0...payload.count {
                let text = Array(payload[..<end])
                let atTheEdge = buffer.with(text) { FlatObjectScan.scan($0, keeping: Self.keys).map { asJSON($0, text) } }
                #expect(atTheEdge == scan(text).map { asJSON($0, text) }, "\(String(decoding: text, as: UTF8.self))")
            }
        }
    }

    @Test("an array of plain scalars under a name not kept is checked and skipped; any other array is the parser's")
    func flatArrays() throws {
        let scanned = try #require(scan(#"{"inregions":["home", "work"],"inrids":[],"n":[1,-2.5e3,true,false,null],"lat":1}"#))
        #expect(scanned.values[1] == .number(1))
        for text in [
            #"{"lat": [1]}"#, #"{"x": [[1]]}"#, #"{"x": [{}]}"#, #"{"x": [1,]}"#, #"{"x": [1 2]}"#, #"{"x": [,1]}"#,
            #"{"x": ["a"b"]}"#, #"{"x": ["é"]}"#, #"{"x": [01]}"#, #"{"x": [tru]}"#, #"{"x": [1"#, #"{"x": ["#, #"{"x": [1]"#,
        ] {
            #expect(scan(text) == nil, "\(text)")
        }
    }

    @Test("at most 32 members: an object with more is the parser's")
    func memberLimit() {
        let members = (0..<33).map { "\"m\($0)\":\($0)" }
        #expect(scan("{" + members.prefix(32).joined(separator: ",") + "}") != nil)
        #expect(scan("{" + members.joined(separator: ",") + "}") == nil)
    }

    @Test("names that share their length and first and last bytes are told apart, and a repeat found")
    func namesAlike() throws {
        // Summaries alike (length 3, 'a' … 'c'): none is a repeat until "abc" comes again.
        #expect(scan(#"{"abc":1,"aXc":2,"a_c":3,"lat":4}"#) != nil)
        #expect(scan(#"{"abc":1,"aXc":2,"a_c":3,"abc":4}"#) == nil)
        // A kept name's look-alike is not kept.
        let scanned = try #require(scan(#"{"lbt":1,"lat":2,"lut":3}"#))
        #expect(scanned.values[1] == .number(2))
    }

    @Test("what the scan takes, the parser takes with the same values: a location payload changed at random, 20 000 times")
    func mutatedPayloads() {
        let payload = Array(#"{"_type":"location","acc":12,"alt":40,"batt":71,"bs":1,"conn":"w","lat":52.520008,"lon":13.404954,"tid":"ph","tst":1700000000,"vac":3,"vel":0,"ok":true,"none":null,"inregions":["home",7]}"#.utf8)
        let alphabet = Array(#"{}[]",:0123456789.eE+-truefalsn\ "#.utf8) + [0x00, 0x0A, 0x09, 0xFF, 0xC3, 0xA4]
        var generator = SplitMix64(seed: 17)
        var taken = 0
        for _ in 0..<20_000 {
            let text = RandomEdits.edited(payload, alphabet: alphabet, maximum: 4, &generator)
            if expectParserAgrees(text) { taken += 1 }
        }
        // Both ways are taken many times over: the mutations are neither all fatal nor all harmless.
        #expect(taken > 2_000 && taken < 18_000, "\(taken) of 20 000 taken")
    }
}
