import Testing
import GeotifyJSON

/// Writing an object member by member gives the bytes `JSONWriter` gives for the same
/// `JSONObject`.
@Suite("JSON object writer")
struct JSONObjectWriterTests {
    /// What a member is made of here: a string, a number, or an array of objects of
    /// strings and numbers.
    enum Member {
        case string(String)
        case number(Double)
        case objects([[(StaticString, Member)]])
    }

    static func tree(_ members: [(StaticString, Member)]) -> JSON {
        var object = JSONObject()
        for (literal, member) in members {
            let key = literal.withUTF8Buffer { String(decoding: $0, as: UTF8.self) }
            switch member {
            case .string(let text): object[key] = .string(text)
            case .number(let number): object[key] = .number(number)
            case .objects(let objects): object[key] = .array(objects.map { tree($0) })
            }
        }
        return .object(object)
    }

    static func written(_ members: [(StaticString, Member)], into writer: inout JSONObjectWriter) {
        for (key, member) in members {
            switch member {
            case .string(let text): writer.string(key, text)
            case .number(let number): writer.number(key, number)
            case .objects(let objects): writer.objects(key, objects) { inner, members in written(members, into: &inner) }
            }
        }
    }

    static let texts = ["", "alice/phone", "Caf\u{E9} \u{1F3E0}", "quote \" backslash \\ newline \n tab \t", "\u{1}\u{1F}", "home"]
    /// Keys as the messages' code writes them, literals (none JSON must escape), one for
    /// each member an object may have here.
    static let keys: [StaticString] = ["device", "lat", "Caf\u{E9} \u{1F3E0}", "", "event_type", "a b/c", "_type"]
    static let numbers: [Double] = [0, -0.0, 3, -12, 52.520008, 13.404954, 1_700_000_060, 1e15, 1e16, 0.1, .nan, .infinity, 1e-7]

    static func member(_ generator: inout some RandomNumberGenerator, depth: Int) -> Member {
        switch Int.random(in: 0..<(depth > 0 ? 3 : 2), using: &generator) {
        case 0: return .string(texts.randomElement(using: &generator)!)
        case 1: return .number(numbers.randomElement(using: &generator)!)
        default:
            return .objects((0..<Int.random(in: 0...3, using: &generator)).map { _ in
                object(&generator, depth: depth - 1)
            })
        }
    }

    static func object(_ generator: inout some RandomNumberGenerator, depth: Int) -> [(StaticString, Member)] {
        keys.shuffled(using: &generator).prefix(Int.random(in: 0...keys.count, using: &generator)).map { key in
            (key, member(&generator, depth: depth))
        }
    }

    @Test func theBytesAreThoseOfTheObjectWrittenWhole() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let members = Self.object(&generator, depth: 2)
            var writer = JSONObjectWriter()
            Self.written(members, into: &writer)
            let bytes = writer.bytes()
            #expect(bytes == JSONWriter().bytes(Self.tree(members)), "\(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test func anEmptyObjectAndAnEmptyArray() {
        #expect(JSONObjectWriter().bytes() == Array("{}".utf8))
        var writer = JSONObjectWriter()
        writer.objects("inside", [Int]()) { _, _ in }
        writer.number("badge", 2)
        #expect(writer.bytes() == Array(#"{"inside":[],"badge":2}"#.utf8))
    }

    #if DEBUG
    /// Keys are written unescaped: a key that JSON must escape stops a debug build (in a
    /// child process), though the module is optimised there too.
    @Test func aKeyJSONMustEscapeStopsTheDebugBuild() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var writer = JSONObjectWriter()
            writer.number("a \"quoted\" key", 1)
            _ = writer.bytes()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("a key JSON must escape: a \"quoted\" key"), "\(message)")
    }
    #endif
}
