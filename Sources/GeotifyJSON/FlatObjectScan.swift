/// The members of a flat JSON object read in one pass, building nothing: the hot path of
/// location messages, whose members are all plain strings and numbers.
///
/// `scan` takes only the plainest documents: an object whose member names and string
/// values are printable ASCII without escapes, whose values are strings, numbers, `true`,
/// `false` or `null` (or, for a name not kept, an array of those, as OwnTracks'
/// `inregions`), with at most `maximumMembers` members, none named twice. For any
/// other text, valid JSON or not, it returns nil and the caller reads the text with
/// `JSONParser.parse(_:visitingMembers:_:)`, which judges everything and says what is
/// wrong. So whatever `scan` takes, the parser takes too, with the same values for the
/// same names (numbers through the same `JSONNumber.scan`); the `owntracks` and `plain`
/// fuzz targets check that on every input they try.
///
/// What it spares the parser's general path: building a `JSON` value for each kept
/// member and handing it through a closure, the errors' bookkeeping (lines, typed throws
/// through every level), and the general record of member names that stays linear for
/// objects of thousands of members. With the decoder's use of its values
/// (`LocationDecoder`), decoding a side-by-side position went from about 650 to 400 ns
/// (`geotify-bench lane`).
package struct FlatObjectScan: Sendable {
    /// A kept member's value: a string as the span of its bytes (between the quotes) in
    /// the scanned text.
    package enum Value: Sendable, Equatable {
        case string(Range<Int>)
        case number(Double)
        case bool(Bool)
        case null

        /// The value as the parser hands it over, a string read out of `bytes`, the
        /// scanned text.
        package func json(in bytes: [UInt8]) -> JSON {
            switch self {
            case .string(let span): .string(String(decoding: bytes[span], as: UTF8.self))
            case .number(let number): .number(number)
            case .bool(let value): .bool(value)
            case .null: .null
            }
        }
    }

    /// How many names `scan` keeps at most (`JSONParser.MemberNames` beyond that: nil).
    package static let maximumKept = 8
    /// How many members an object `scan` takes may have: more than a location message has.
    package static let maximumMembers = 32

    /// The value of each kept name, by its position in the `MemberNames`.
    package private(set) var values = InlineArray<8, Value?>(repeating: nil)

    /// The kept members of the object `bytes` holds, or nil when it is not a document
    /// this scan takes (see the type's comment).
    package static func scan(_ bytes: UnsafeBufferPointer<UInt8>, keeping names: JSONParser.MemberNames) -> FlatObjectScan? {
        var scan = FlatObjectScan()
        return scan.read(bytes, keeping: names) ? scan : nil
    }

    /// Reads the object `bytes` holds into `values`; false when it is not a document this
    /// scan takes.
    private mutating func read(_ bytes: UnsafeBufferPointer<UInt8>, keeping names: JSONParser.MemberNames) -> Bool {
        guard names.count <= Self.maximumKept else { return false }
        var index = 0
        let count = bytes.count
        // Each member name's summary (`JSONParser.MemberNames.summary`) and where it
        // starts, for refusing one named twice: a 64-bit filter of the summaries says
        // "new" for most names without a search.
        var summaries = InlineArray<32, UInt64>(repeating: 0)
        var starts = InlineArray<32, Int>(repeating: 0)
        var filter: UInt64 = 0
        var members = 0
        Self.skipWhitespace(bytes, &index)
        guard index < count, bytes[index] == UInt8(ascii: "{") else { return false }
        index += 1
        Self.skipWhitespace(bytes, &index)
        guard index < count else { return false }
        if bytes[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                guard index < count, bytes[index] == UInt8(ascii: "\""), let name = Self.plainString(bytes, &index),
                      members < Self.maximumMembers
                else { return false }
                let nameBytes = UnsafeBufferPointer(rebasing: bytes[name])
                let summary = JSONParser.MemberNames.summary(nameBytes)
                let bit = JSONParser.MemberNames.bit(summary)
                if filter & bit != 0 {
                    for earlier in 0..<members where summaries[earlier] == summary
                        && Self.equal(bytes, from: starts[earlier], and: name.lowerBound, count: name.count) {
                        return false
                    }
                }
                filter |= bit
                summaries[members] = summary
                starts[members] = name.lowerBound
                members += 1
                Self.skipWhitespace(bytes, &index)
                guard index < count, bytes[index] == UInt8(ascii: ":") else { return false }
                index += 1
                Self.skipWhitespace(bytes, &index)
                guard index < count else { return false }
                let slot = names.slot(nameBytes, summary: summary)
                if bytes[index] == UInt8(ascii: "[") {
                    // An array of plain scalars (OwnTracks' `inregions`), checked and
                    // skipped; one for a kept name is the parser's to judge.
                    guard slot == nil, Self.skipFlatArray(bytes, &index) else { return false }
                } else {
                    guard let value = Self.scalar(bytes, &index) else { return false }
                    if let slot { values[slot] = value }
                }
                Self.skipWhitespace(bytes, &index)
                guard index < count else { return false }
                if bytes[index] == UInt8(ascii: "}") {
                    index += 1
                    break
                }
                guard bytes[index] == UInt8(ascii: ",") else { return false }
                index += 1
                Self.skipWhitespace(bytes, &index)
            }
        }
        Self.skipWhitespace(bytes, &index)
        return index == count
    }

    /// The plain scalar at `index` (a string without escapes, a number, `true`, `false`
    /// or `null`), moving past it; nil for anything else.
    @inline(__always)
    private static func scalar(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Value? {
        switch bytes[index] {
        case UInt8(ascii: "\""):
            return plainString(bytes, &index).map { .string($0) }
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard case .value(let number) = JSONNumber.scan(bytes, &index) else { return nil }
            return .number(number)
        case UInt8(ascii: "t"):
            return literal("true", bytes, &index) ? .bool(true) : nil
        case UInt8(ascii: "f"):
            return literal("false", bytes, &index) ? .bool(false) : nil
        case UInt8(ascii: "n"):
            return literal("null", bytes, &index) ? .null : nil
        default:
            return nil
        }
    }

    /// Moves past the array at `index` when its elements are plain scalars (`scalar`);
    /// false for any other array, or text that is not one.
    private static func skipFlatArray(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        index += 1
        skipWhitespace(bytes, &index)
        guard index < bytes.count else { return false }
        if bytes[index] == UInt8(ascii: "]") {
            index += 1
            return true
        }
        while true {
            guard index < bytes.count, scalar(bytes, &index) != nil else { return false }
            skipWhitespace(bytes, &index)
            guard index < bytes.count else { return false }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return true
            }
            guard bytes[index] == UInt8(ascii: ",") else { return false }
            index += 1
            skipWhitespace(bytes, &index)
        }
    }

    /// Moves past JSON whitespace (as the parser's: space, tab, CR, LF).
    @inline(__always)
    private static func skipWhitespace(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D, 0x0A: index += 1
            default: return
            }
        }
    }

    /// The span of the string at its opening quote (`index`) when it is printable ASCII
    /// without escapes, moving past its closing quote; nil otherwise.
    @inline(__always)
    private static func plainString(_ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Range<Int>? {
        let start = index + 1
        var at = start
        while at < bytes.count {
            let byte = bytes[at]
            if byte == UInt8(ascii: "\"") {
                index = at + 1
                return start..<at
            }
            guard byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\\") else { return nil }
            at += 1
        }
        return nil
    }

    /// Whether the `count` bytes from `first` and from `second` are the same.
    @inline(__always)
    private static func equal(_ bytes: UnsafeBufferPointer<UInt8>, from first: Int, and second: Int, count: Int) -> Bool {
        var offset = 0
        while offset < count && bytes[first + offset] == bytes[second + offset] { offset += 1 }
        return offset == count
    }

    /// Whether `word` is at `index`, moving past it if so.
    @inline(__always)
    private static func literal(_ word: StaticString, _ bytes: UnsafeBufferPointer<UInt8>, _ index: inout Int) -> Bool {
        let length = word.utf8CodeUnitCount
        guard index + length <= bytes.count else { return false }
        let matches = word.withUTF8Buffer { expected in
            var offset = 0
            while offset < length && bytes[index + offset] == expected[offset] { offset += 1 }
            return offset == length
        }
        guard matches else { return false }
        index += length
        return true
    }
}
