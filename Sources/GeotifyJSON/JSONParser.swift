/// Parses JSON text (RFC 8259) into a `JSON` value.
///
/// It is strict about the grammar (no comments, no trailing commas, no NaN), bounded in
/// nesting depth so hostile input cannot exhaust the stack, and reports the line and
/// column of the first problem. Strings must be valid UTF-8. With
/// `rejectingDuplicateMembers`, an object that names a member twice is refused too
/// (RFC 8259 leaves such objects to each reader: some take the first value, some the
/// last, so two programs reading one message could disagree on what it says).
public struct JSONParser: Sendable {
    /// The deepest nesting of arrays and objects accepted.
    public var maxDepth: Int
    /// Whether an object naming a member twice (after escapes are decoded: `"lat"` and
    /// `"l\u0061t"` are the same name) is refused with a `JSONError` whose
    /// `duplicateMember` is that name; every object counts, built or skipped.
    public var rejectingDuplicateMembers: Bool

    public init(maxDepth: Int = 64, rejectingDuplicateMembers: Bool = false) {
        self.maxDepth = maxDepth
        self.rejectingDuplicateMembers = rejectingDuplicateMembers
    }

    /// Parses one JSON value that makes up the whole of `bytes` (surrounding whitespace allowed).
    public func parse(_ bytes: [UInt8]) throws(JSONError) -> JSON {
        try Self.reading(bytes) { buffer throws(JSONError) in try parse(buffer) }
    }

    /// `parse(_:)` over bytes wherever the caller keeps them (a test puts them at the end
    /// of readable memory, where a read past them crashes).
    package func parse(_ buffer: UnsafeBufferPointer<UInt8>) throws(JSONError) -> JSON {
        var reader = Reader(bytes: buffer, maxDepth: maxDepth, rejectingDuplicates: rejectingDuplicateMembers)
        return try reader.document()
    }

    /// `body`'s reading of `bytes` in place, its typed error passed on (a closure given to
    /// `withUnsafeBufferPointer` may throw only `any Error`).
    private static func reading<Value>(
        _ bytes: [UInt8], _ body: (UnsafeBufferPointer<UInt8>) throws(JSONError) -> Value
    ) throws(JSONError) -> Value {
        let result: Result<Value, JSONError> = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONError) in try body(buffer) }
        }
        return try result.get()
    }

    /// Parses one JSON value from UTF-8 text.
    public func parse(_ text: String) throws(JSONError) -> JSON {
        try parse(Array(text.utf8))
    }

    /// How many pairs of member names the duplicate check compared in full while parsing
    /// `bytes` as `parse(_:)` does, rejecting duplicates: the work that a hostile
    /// object's names can cause, which the tests bound.
    package func nameComparisons(parsing bytes: [UInt8]) throws(JSONError) -> Int {
        try Self.reading(bytes) { buffer throws(JSONError) in
            var reader = Reader(bytes: buffer, maxDepth: maxDepth, rejectingDuplicates: true)
            _ = try reader.document()
            return reader.nameComparisons
        }
    }

    /// The member names `parse(_:visitingMembers:_:)` hands over, prepared once for matching
    /// against raw bytes (make one per set of names and keep it).
    public struct MemberNames: Sendable {
        let names: [String]
        /// The names' UTF-8 back to back, where each starts and ends in it, and each one's
        /// `summary`: plain values, so a lookup retains nothing (an array of arrays
        /// retained each name it compared, for every member of every message).
        private let utf8: [UInt8]
        private let spans: [Range<Int>]
        private let summaries: [UInt64]
        /// One bit for each name's summary: most members of a message are not kept, and
        /// most of those are told so by this word alone.
        private let filter: UInt64

        /// The set of `names`.
        public init(_ names: [String]) {
            self.names = names
            var utf8: [UInt8] = []
            var spans: [Range<Int>] = []
            var summaries: [UInt64] = []
            var filter: UInt64 = 0
            for name in names {
                let start = utf8.count
                utf8.append(contentsOf: name.utf8)
                spans.append(start..<utf8.count)
                let summary = utf8.withUnsafeBufferPointer { Self.summary(UnsafeBufferPointer(rebasing: $0[start...])) }
                summaries.append(summary)
                filter |= Self.bit(summary)
            }
            self.utf8 = utf8
            self.spans = spans
            self.summaries = summaries
            self.filter = filter
        }

        /// No names: objects skipped as a whole.
        static let empty = MemberNames([])

        /// How many names there are.
        var count: Int { spans.count }

        /// A name's length, first and last bytes in one word.
        @inline(__always)
        static func summary(_ name: UnsafeBufferPointer<UInt8>) -> UInt64 {
            guard let first = name.first, let last = name.last else { return 0 }
            return UInt64(truncatingIfNeeded: name.count) &<< 16 | UInt64(first) &<< 8 | UInt64(last)
        }

        /// The bit of a 64-bit filter that stands for `summary`: the top six bits of a
        /// multiplicative hash pick it. (The shift binds tighter than the product in Swift:
        /// without the parentheses the product was by the constant's top six bits, and the
        /// bit came from a name's last byte alone, so most names of a location message
        /// shared their bit with another.)
        @inline(__always)
        static func bit(_ summary: UInt64) -> UInt64 {
            1 &<< ((summary &* 0x9E37_79B9_7F4A_7C15) &>> 58)
        }

        /// The position in `names` of the name whose UTF-8 is `name`: a kept member's key
        /// is the prepared string, not one made again from the bytes for every message.
        func slot(_ name: UnsafeBufferPointer<UInt8>) -> Int? {
            slot(name, summary: Self.summary(name))
        }

        /// `slot(_:)` for a name whose `summary` is known.
        @inline(__always)
        func slot(_ name: UnsafeBufferPointer<UInt8>, summary: UInt64) -> Int? {
            guard filter & Self.bit(summary) != 0 else { return nil }
            return utf8.withUnsafeBufferPointer { utf8 in
                summaries.withUnsafeBufferPointer { summaries in
                    spans.withUnsafeBufferPointer { spans in
                        for index in summaries.indices where summaries[index] == summary {
                            let start = spans[index].lowerBound
                            var offset = 0
                            while offset < name.count && utf8[start + offset] == name[offset] { offset += 1 }
                            if offset == name.count { return index }
                        }
                        return nil
                    }
                }
            }
        }
    }

    /// Parses `bytes` as `parse(_:)` does (the same grammar, limits and errors) but builds
    /// no object: when the value is an object, each of its members named in `keys` is
    /// handed to `visit` with the position of its name in `keys`, and the others are
    /// checked and skipped without being built; the result is nil. A value that is not an
    /// object is returned whole. When the text turns out not to be JSON, `visit` may
    /// already have seen members before the problem.
    ///
    /// It exists for the hot path of reading a few fields from messages that carry many
    /// (an OwnTracks location has a dozen, Geotify reads five): skipping costs a scan,
    /// building costs allocations, and the values read go into the caller's own
    /// variables, without an array of members or a string for each name.
    public func parse(
        _ bytes: [UInt8], visitingMembers keys: MemberNames, _ visit: (Int, JSON) -> Void
    ) throws(JSONError) -> JSON? {
        try Self.reading(bytes) { buffer throws(JSONError) in try parse(buffer, visitingMembers: keys, visit) }
    }

    /// `parse(_:visitingMembers:_:)` over bytes wherever the caller keeps them.
    package func parse(
        _ buffer: UnsafeBufferPointer<UInt8>, visitingMembers keys: MemberNames, _ visit: (Int, JSON) -> Void
    ) throws(JSONError) -> JSON? {
        var reader = Reader(bytes: buffer, maxDepth: maxDepth, rejectingDuplicates: rejectingDuplicateMembers)
        return try reader.document(visiting: keys, visit)
    }

    /// One member of the object `parse(_:streamingMembersOf:_:)` streams.
    public struct StreamedMember: Sendable {
        /// The member's name.
        public var name: String
        public var value: JSON
        /// The line of the object it is a member of (`JSONObject.line`).
        public var objectLine: Int
        /// Which of the top-level object's members named the streamed key it belongs to,
        /// from 0: a hostile document may name the key more than once.
        public var occurrence: Int
    }

    /// Parses `bytes` as `parse(_:)` does (the same grammar, limits and errors) but, when
    /// the value is an object and its member `key` is an object, hands each member of
    /// that object to `visit` as soon as it is read instead of building it into the tree.
    /// In the tree returned, that member's value is an empty object with its line. When
    /// the text turns out not to be JSON, `visit` may already have seen the members
    /// before the problem: the caller keeps what it made until this returns.
    ///
    /// It exists for documents with one large part: the devices of a fence file, whose
    /// whole tree was the start's peak of memory (about 500 B a fence, where the fence
    /// made from it takes 250 B). With `rejectingDuplicateMembers`, which has to see
    /// every object whole, the tree is built and its members handed over afterwards.
    public func parse(
        _ bytes: [UInt8], streamingMembersOf key: String, _ visit: (StreamedMember) -> Void
    ) throws(JSONError) -> JSON {
        try Self.reading(bytes) { buffer throws(JSONError) in try parse(buffer, streamingMembersOf: key, visit) }
    }

    /// `parse(_:streamingMembersOf:_:)` over bytes wherever the caller keeps them.
    package func parse(
        _ buffer: UnsafeBufferPointer<UInt8>, streamingMembersOf key: String, _ visit: (StreamedMember) -> Void
    ) throws(JSONError) -> JSON {
        guard !rejectingDuplicateMembers else {
            let document = try parse(buffer)
            guard case .object(var root) = document,
                  let position = root.members.firstIndex(where: { $0.key == key }),
                  case .object(let streamed) = root.members[position].value
            else { return document }
            // A member given twice was refused: `key` is there at most once (occurrence 0).
            for member in streamed.members {
                visit(StreamedMember(name: member.key, value: member.value, objectLine: streamed.line, occurrence: 0))
            }
            root.members[position].value = .object(JSONObject([], line: streamed.line))
            return .object(root)
        }
        var reader = Reader(bytes: buffer, maxDepth: maxDepth, rejectingDuplicates: false)
        return try reader.document(streaming: key, visit: visit)
    }
}

/// The cursor over the bytes; one per parse.
private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    let rejectingDuplicates: Bool
    var index = 0
    var line = 1
    var lineStart = 0
    var depth = 0
    /// How many pairs of member names the duplicate check compared (`SeenNames`).
    var nameComparisons = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int, rejectingDuplicates: Bool) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.rejectingDuplicates = rejectingDuplicates
    }

    /// The whole text as one value.
    mutating func document() throws(JSONError) -> JSON {
        skipWhitespace()
        if index == bytes.count { throw error("the text is empty, expected a JSON value") }
        let value = try self.value()
        try finish()
        return value
    }

    /// The whole text, a top-level object's members named in `keys` handed to `visit`
    /// (`JSONParser.parse(_:visitingMembers:_:)`): nil for an object, else the value.
    mutating func document(visiting keys: JSONParser.MemberNames, _ visit: (Int, JSON) -> Void) throws(JSONError) -> JSON? {
        skipWhitespace()
        if index == bytes.count { throw error("the text is empty, expected a JSON value") }
        let value: JSON?
        if bytes[index] == UInt8(ascii: "{") {
            try withSeenNames { (reader, seen) throws(JSONError) in
                _ = try reader.eachMember(keeping: .only(keys), seen: &seen) { (reader, _, slot) throws(JSONError) in
                    visit(slot, try reader.value())
                }
            }
            value = nil
        } else {
            value = try self.value()
        }
        try finish()
        return value
    }

    /// Refuses anything but whitespace after the document's value.
    mutating func finish() throws(JSONError) {
        skipWhitespace()
        if index < bytes.count { throw error("unexpected \(describeByte()) after the JSON value") }
    }

    /// The whole text as one value, a top-level object's member `key` streamed to
    /// `visit` when it is an object (`JSONParser.parse(_:streamingMembersOf:_:)`).
    mutating func document(
        streaming key: String, visit: (JSONParser.StreamedMember) -> Void
    ) throws(JSONError) -> JSON {
        skipWhitespace()
        if index == bytes.count { throw error("the text is empty, expected a JSON value") }
        let value: JSON
        if bytes[index] == UInt8(ascii: "{") {
            var kept: [JSONObject.Member] = []
            var occurrence = 0
            // Streaming runs only without the duplicate check (`parse(_:streamingMembersOf:_:)`).
            var unchecked: SeenNames?
            let line = try eachMember(keeping: .all, seen: &unchecked) { (reader, name, _) throws(JSONError) in
                guard name == key, reader.index < reader.bytes.count, reader.bytes[reader.index] == UInt8(ascii: "{") else {
                    kept.append(JSONObject.Member(key: name, value: try reader.value()))
                    return
                }
                let current = occurrence
                // The line of its opening brace, where the reader stands.
                let objectLine = reader.line
                var uncheckedInner: SeenNames?
                _ = try reader.eachMember(keeping: .all, seen: &uncheckedInner) { (reader, member, _) throws(JSONError) in
                    let streamed = try reader.value()
                    visit(JSONParser.StreamedMember(name: member, value: streamed, objectLine: objectLine, occurrence: current))
                }
                kept.append(JSONObject.Member(key: name, value: .object(JSONObject([], line: objectLine))))
                occurrence += 1
            }
            value = .object(JSONObject(kept, line: line))
        } else {
            value = try self.value()
        }
        try finish()
        return value
    }

    /// After a member's value: moves past the ',' before the next member (false) or the
    /// '}' that closes the object (true), refusing anything else.
    @inline(__always)
    mutating func endsObject() throws(JSONError) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw error("unexpected end of text, expected ',' or '}'") }
        if bytes[index] == UInt8(ascii: ",") {
            index += 1
            return false
        }
        if bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return true
        }
        throw error("unexpected \(describeByte()), expected ',' or '}'")
    }

    func error(_ reason: String) -> JSONError {
        JSONError(line: line, column: index - lineStart + 1, reason: reason)
    }

    func describeByte() -> String {
        guard index < bytes.count else { return "end of text" }
        let byte = bytes[index]
        if byte >= 0x21 && byte < 0x7F { return "character '\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true))"
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D:
                index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default:
                return
            }
        }
    }

    mutating func value() throws(JSONError) -> JSON {
        guard index < bytes.count else { throw error("unexpected end of text, expected a JSON value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try object(keeping: .all))
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw error("unexpected \(describeByte()), expected a JSON value")
        }
    }

    mutating func literal(_ word: String) throws(JSONError) {
        let expected = word.utf8
        guard index + expected.count <= bytes.count else { throw error("unexpected end of text in '\(word)'") }
        for (offset, byte) in expected.enumerated() where bytes[index + offset] != byte {
            throw error("unexpected \(describeByte()), expected a JSON value")
        }
        index += expected.count
    }

    mutating func enter() throws(JSONError) {
        depth += 1
        if depth > maxDepth { throw error("nesting deeper than \(maxDepth) levels") }
    }

    /// Which members of an object to build.
    enum Members {
        case all
        /// Only these keys; the other members are checked and skipped.
        case only(JSONParser.MemberNames)
    }

    /// Reads an object starting at its opening brace, building the members `members` keeps.
    mutating func object(keeping members: Members) throws(JSONError) -> JSONObject {
        try withSeenNames { (reader, seen) throws(JSONError) in
            var kept: [JSONObject.Member] = []
            let line = try reader.eachMember(keeping: members, seen: &seen) { (reader, key, _) throws(JSONError) in
                kept.append(JSONObject.Member(key: key, value: try reader.value()))
            }
            return JSONObject(kept, line: line)
        }
    }

    /// Runs `body` with a record of member names for one object when duplicates are
    /// refused (the list on the stack), nil when they are not.
    private mutating func withSeenNames<Value>(
        _ body: (inout Reader, inout SeenNames?) throws(JSONError) -> Value
    ) throws(JSONError) -> Value {
        guard rejectingDuplicates else {
            var none: SeenNames?
            return try body(&self, &none)
        }
        return try withUnsafeTemporaryAllocation(of: SeenNames.Entry.self, capacity: SeenNames.listCapacity) {
            (list) throws(JSONError) -> Value in
            var seen: SeenNames? = SeenNames(list: list)
            defer { nameComparisons += seen?.comparisons ?? 0 }
            return try body(&self, &seen)
        }
    }

    /// Reads an object at its opening brace, recording the member names in `seen` when
    /// there is one; hands each member that `members` keeps to `kept` (its name, and its
    /// position among `.only`'s names, 0 for `.all`), which reads the value, and skips
    /// the others. Returns the object's line.
    private mutating func eachMember(
        keeping members: Members, seen: inout SeenNames?, _ kept: (inout Reader, String, Int) throws(JSONError) -> Void
    ) throws(JSONError) -> Int {
        try enter()
        let startLine = line
        index += 1
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return startLine
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("unexpected \(describeByte()), expected a member name in double quotes")
            }
            let keyStart = index
            let (key, slot, plain) = try memberName(keeping: members)
            try seen?.insert(nameAt: keyStart, end: index, key: key, plain: plain, reader: self)
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("unexpected \(describeByte()), expected ':' after the member name \"\(key ?? name(at: keyStart))\"")
            }
            index += 1
            skipWhitespace()
            if let key {
                try kept(&self, key, slot)
            } else {
                try skipValue()
            }
            if try endsObject() { return startLine }
        }
    }

    /// Reads a member name at its opening quote: the name when `members` keeps it, nil
    /// (without building a string, for plain ASCII names) when it does not; its position
    /// among `.only`'s names (0 for `.all`); and whether it is known to be plain ASCII
    /// without escapes (its bytes are then the name).
    mutating func memberName(keeping members: Members) throws(JSONError) -> (key: String?, slot: Int, plain: Bool) {
        guard case .only(let keys) = members else { return (try string(), 0, false) }
        let start = index
        guard let span = try plainString() else {
            index = start
            let name = try string()
            guard let slot = keys.names.firstIndex(of: name) else { return (nil, 0, false) }
            return (name, slot, false)
        }
        guard let slot = keys.slot(span) else { return (nil, 0, true) }
        return (keys.names[slot], slot, true)
    }

    /// The member name whose opening quote is at `offset`, for an error message about it
    /// (the name has been read without error before).
    func name(at offset: Int) -> String {
        var reader = self
        reader.index = offset
        return (try? reader.string()) ?? ""
    }

    /// Checks the value at `index` and moves past it without building it.
    mutating func skipValue() throws(JSONError) {
        guard index < bytes.count else { throw error("unexpected end of text, expected a JSON value") }
        switch bytes[index] {
        case UInt8(ascii: "{"): _ = try object(keeping: .only(.empty))
        case UInt8(ascii: "["): _ = try array(building: false)
        case UInt8(ascii: "\""):
            let start = index
            if try plainString() == nil {
                index = start
                _ = try string()
            }
        case UInt8(ascii: "t"): try literal("true")
        case UInt8(ascii: "f"): try literal("false")
        case UInt8(ascii: "n"): try literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try number()
        default: throw error("unexpected \(describeByte()), expected a JSON value")
        }
    }

    /// Reads a string at its opening quote when it is plain ASCII without escapes and
    /// returns its bytes; returns nil (the caller then reads it with `string()`, which
    /// handles and checks escapes and UTF-8) as soon as it is not. Throws what `string()`
    /// throws for a control character or a missing closing quote, at the same place.
    mutating func plainString() throws(JSONError) -> UnsafeBufferPointer<UInt8>? {
        index += 1
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return UnsafeBufferPointer(rebasing: bytes[start..<(index - 1)])
            }
            if byte == UInt8(ascii: "\\") || byte >= 0x80 { return nil }
            if byte < 0x20 { throw error("unescaped control character in a string") }
            index += 1
        }
        throw error("unterminated string")
    }

    /// Reads an array at its opening bracket; with `building` false its elements are
    /// checked and skipped, and the result is empty.
    mutating func array(building: Bool = true) throws(JSONError) -> JSON {
        try enter()
        index += 1
        var elements: [JSON] = []
        skipWhitespace()
        if index < bytes.count && bytes[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            if building {
                elements.append(try value())
            } else {
                try skipValue()
            }
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of text, expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                depth -= 1
                return .array(elements)
            }
            throw error("unexpected \(describeByte()), expected ',' or ']'")
        }
    }

    /// Reads a string starting at the opening quote.
    mutating func string() throws(JSONError) -> String {
        index += 1
        let start = index
        var plain = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if plain { return String(decoding: slice, as: UTF8.self) }
                guard let text = String(validating: slice, as: UTF8.self) else {
                    throw error("a string is not valid UTF-8")
                }
                return text
            }
            if byte == UInt8(ascii: "\\") {
                index = start
                return try escapedString()
            }
            if byte < 0x20 { throw error("unescaped control character in a string") }
            if byte >= 0x80 { plain = false }
            index += 1
        }
        throw error("unterminated string")
    }

    /// The slow path for strings with escapes; starts just after the opening quote.
    mutating func escapedString() throws(JSONError) -> String {
        var utf8: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: utf8, as: UTF8.self) else {
                    throw error("a string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("unterminated string") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): utf8.append(0x22)
                case UInt8(ascii: "\\"): utf8.append(0x5C)
                case UInt8(ascii: "/"): utf8.append(0x2F)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): try unicodeEscape(into: &utf8)
                default:
                    index -= 1
                    throw error("invalid escape '\\\(Character(Unicode.Scalar(escape)))' in a string")
                }
            default:
                if byte < 0x20 { throw error("unescaped control character in a string") }
                utf8.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    mutating func hexQuad() throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("unterminated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in a \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func unicodeEscape(into utf8: inout [UInt8]) throws(JSONError) {
        var scalarValue = try hexQuad()
        if (0xD800...0xDBFF).contains(scalarValue) {
            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw error("a \\u escape of a high surrogate is not followed by a low surrogate") }
            index += 2
            let low = try hexQuad()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid low surrogate in a \\u escape") }
            scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalarValue) {
            throw error("a lone low surrogate in a \\u escape")
        }
        guard let scalar = Unicode.Scalar(scalarValue) else { throw error("invalid \\u escape") }
        utf8.append(contentsOf: String(Character(scalar)).utf8)
    }

    /// Reads a number (`JSONNumber.scan`).
    mutating func number() throws(JSONError) -> Double {
        let start = index
        switch JSONNumber.scan(bytes, &index) {
        case .value(let value):
            return value
        case .malformed(let reason):
            throw error("\(reason)")
        case .outOfRange:
            let text = JSONNumber.text(bytes, start..<index)
            index = start
            throw error("the number \(text) is out of range")
        }
    }
}

/// The member names of one object read so far, for refusing a name given twice.
///
/// It runs for every location message, so the common case builds no string, hashes
/// nothing and allocates nothing. Each name is summed up by its length and its first and
/// last bytes (of its decoded UTF-8, the raw bytes when it has no escape), and kept with
/// the offset of its opening quote in a list on the stack (`listCapacity` names). A 64-bit
/// filter of the summaries answers "new" for most names without a search; names whose
/// summaries match are compared in full. An object with more members moves them into a
/// dictionary keyed by a full hash of each name (`Hasher`, seeded afresh in every
/// process), so a hostile object with thousands of members still costs linear time:
/// keyed by the summary, names such as "n0" … "n7000", or any that share their length
/// and first and last bytes, piled up in a few buckets and a 64 KiB payload took a
/// second of comparisons.
private struct SeenNames {
    /// One name: its summary, where its opening quote is, whether its raw bytes are it.
    struct Entry {
        var summary: UInt64
        var start: Int
        var plain: Bool
    }

    /// How many names fit the list on the stack: more than an OwnTracks location has.
    static let listCapacity = 32

    private let list: UnsafeMutableBufferPointer<Entry>
    private var count = 0
    private var filter: UInt64 = 0
    /// Every name by its hash (`hash(_:reader:)`), once there are more than the list
    /// holds; a name whose hash an earlier name has (about one chance in 2^64 a pair) is
    /// kept in `collided` instead.
    private var overflow: [Int: Entry] = [:]
    private var collided: [Int: [Entry]] = [:]
    /// How many pairs of names were compared in full (`JSONParser.nameComparisons`).
    private(set) var comparisons = 0

    /// Names recorded in `list`, which must outlive this value.
    init(list: UnsafeMutableBufferPointer<Entry>) {
        self.list = list
    }

    /// Records the name whose quotes span `start..<end` (`key` is it decoded, when the
    /// reader built it; `plain` says its raw bytes are the name); throws if the object
    /// already has a member of that name.
    @inline(__always)
    mutating func insert(nameAt start: Int, end: Int, key: String?, plain: Bool, reader: Reader) throws(JSONError) {
        let summary: UInt64
        if plain {
            summary = JSONParser.MemberNames.summary(UnsafeBufferPointer(rebasing: reader.bytes[(start + 1)..<(end - 1)]))
        } else {
            var name = key ?? reader.name(at: start)
            summary = name.withUTF8 { JSONParser.MemberNames.summary($0) }
        }
        let entry = Entry(summary: summary, start: start, plain: plain)
        if count < list.count {
            let bit = JSONParser.MemberNames.bit(summary)
            if filter & bit != 0 {
                for other in list[0..<count] where other.summary == summary {
                    comparisons += 1
                    try Self.compare(entry, other, reader: reader)
                }
            }
            filter |= bit
            list[count] = entry
            count += 1
            return
        }
        if overflow.isEmpty {
            overflow.reserveCapacity(2 * list.count)
            // Different names, as the list took them: nothing to throw.
            for other in list { try record(other, hash: Self.hash(other, reader: reader), reader: reader) }
        }
        try record(entry, hash: Self.hash(entry, reader: reader), reader: reader)
    }

    /// Keeps `entry` in the dictionary after comparing it with the names of its hash.
    private mutating func record(_ entry: Entry, hash: Int, reader: Reader) throws(JSONError) {
        guard let other = overflow[hash] else {
            overflow[hash] = entry
            return
        }
        for other in [other] + (collided[hash] ?? []) where other.summary == entry.summary {
            comparisons += 1
            try Self.compare(entry, other, reader: reader)
        }
        collided[hash, default: []].append(entry)
    }

    /// The hash of a name's decoded UTF-8 (its raw bytes when it has no escape), so that
    /// every spelling of one name hashes alike.
    private static func hash(_ entry: Entry, reader: Reader) -> Int {
        var hasher = Hasher()
        if entry.plain {
            let length = Int(truncatingIfNeeded: entry.summary >> 16)
            hasher.combine(bytes: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: reader.bytes[(entry.start + 1)...].prefix(length))))
        } else {
            var name = reader.name(at: entry.start)
            name.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        }
        return hasher.finalize()
    }

    /// Throws the duplicate-member error when the names of `entry` and `other` (whose
    /// summaries are equal) are the same.
    private static func compare(_ entry: Entry, _ other: Entry, reader: Reader) throws(JSONError) {
        if entry.plain && other.plain {
            let length = Int(truncatingIfNeeded: entry.summary >> 16)
            let names = (UnsafeBufferPointer(rebasing: reader.bytes[(entry.start + 1)...].prefix(length)),
                         UnsafeBufferPointer(rebasing: reader.bytes[(other.start + 1)...].prefix(length)))
            guard names.0.elementsEqual(names.1) else { return }
        } else {
            guard reader.name(at: entry.start) == reader.name(at: other.start) else { return }
        }
        let name = reader.name(at: entry.start)
        var error = reader.error("the member \"\(name)\" appears more than once in one object")
        error.column = entry.start - reader.lineStart + 1
        error.duplicateMember = name
        throw error
    }

}
