/// The events of an XML document, read byte by byte: start tags with their attributes,
/// end tags and text. Just enough XML for GPX, without libxml2 (which would bring ICU
/// into the binary and the container) and without what makes XML dangerous: no DTD is
/// read (a DOCTYPE with declarations is refused), no entity but the five predefined ones
/// and character references is expanded, and nothing is fetched. Comments, processing
/// instructions and the XML declaration are skipped; CDATA sections are text.
///
/// Names keep their namespace prefix off (`gpx:trkpt` is `trkpt`): GPX readers match
/// elements by local name. Malformed markup is a `TrackError` naming the line.
struct XMLScanner {
    /// One thing in the document.
    enum Event: Equatable {
        /// A start tag (`selfClosing` for `<a/>`, which has no end event of its own).
        case start(name: String, attributes: [String: String], selfClosing: Bool, line: Int)
        case end(name: String, line: Int)
        /// Character data, entities decoded.
        case text(String)
    }

    /// The most attributes one tag may have; more is not GPX.
    static let maximumAttributes = 256

    private let bytes: [UInt8]
    private var index = 0
    /// The line `index` is on, from 1.
    private(set) var line = 1

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    /// The next event, or nil at the end of the document.
    mutating func next() throws(TrackError) -> Event? {
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "<") else { return .text(try text()) }
            if matches("<!--") {
                try skip(past: "-->", what: "comment")
            } else if matches("<![CDATA[") {
                let start = index + 9
                try skip(past: "]]>", what: "CDATA section")
                return .text(String(decoding: bytes[start..<(index - 3)], as: UTF8.self))
            } else if matches("<?") {
                try skip(past: "?>", what: "processing instruction")
            } else if matches("<!") {
                try doctype()
            } else if matches("</") {
                let line = self.line
                index += 2
                let name = try self.name()
                skipSpace()
                try expect(">", in: "end tag </\(name)>")
                return .end(name: name, line: line)
            } else {
                return try startTag()
            }
        }
        return nil
    }

    // MARK: Markup

    private mutating func startTag() throws(TrackError) -> Event {
        let line = self.line
        index += 1
        let name = try self.name()
        var attributes: [String: String] = [:]
        while true {
            let spaced = skipSpace()
            guard index < bytes.count else { throw error("the file ends inside the tag <\(name)>", line: line) }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                return .start(name: name, attributes: attributes, selfClosing: false, line: line)
            }
            if matches("/>") {
                index += 2
                return .start(name: name, attributes: attributes, selfClosing: true, line: line)
            }
            guard spaced else { throw error("unexpected character in the tag <\(name)>") }
            let attribute = try self.name()
            skipSpace()
            try expect("=", in: "the attribute \(attribute) of <\(name)>")
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'") else {
                throw error("the attribute \(attribute) of <\(name)> has no quoted value")
            }
            let quote = bytes[index]
            index += 1
            let start = index
            while index < bytes.count, bytes[index] != quote {
                guard bytes[index] != UInt8(ascii: "<") else { throw error("'<' in the attribute \(attribute) of <\(name)>") }
                advance()
            }
            guard index < bytes.count else { throw error("the file ends inside the attribute \(attribute) of <\(name)>", line: line) }
            guard attributes.count < Self.maximumAttributes else { throw error("more than \(Self.maximumAttributes) attributes in <\(name)>") }
            attributes[attribute] = try decode(bytes[start..<index])
            index += 1
        }
    }

    /// A DOCTYPE without declarations is skipped; one with an internal subset is refused.
    private mutating func doctype() throws(TrackError) {
        let line = self.line
        while index < bytes.count, bytes[index] != UInt8(ascii: ">") {
            if bytes[index] == UInt8(ascii: "[") {
                throw error("a DOCTYPE with declarations is not read (GPX needs none)", line: line)
            }
            advance()
        }
        guard index < bytes.count else { throw error("the file ends inside a <!...> declaration", line: line) }
        index += 1
    }

    /// A name: letters, digits and `_ - . :`, with any prefix before the last colon dropped.
    private mutating func name() throws(TrackError) -> String {
        var localStart = index
        while index < bytes.count, Self.isNameByte(bytes[index]) {
            if bytes[index] == UInt8(ascii: ":") { localStart = index + 1 }
            index += 1
        }
        guard index > localStart else { throw error("a tag or attribute without a name") }
        return String(decoding: bytes[localStart..<index], as: UTF8.self)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"), 0x80...0xFF:
            true
        default:
            false
        }
    }

    // MARK: Text

    private mutating func text() throws(TrackError) -> String {
        let start = index
        while index < bytes.count, bytes[index] != UInt8(ascii: "<") { advance() }
        return try decode(bytes[start..<index])
    }

    /// `raw` with its entity and character references replaced.
    private func decode(_ raw: ArraySlice<UInt8>) throws(TrackError) -> String {
        guard raw.contains(UInt8(ascii: "&")) else { return String(decoding: raw, as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(raw.count)
        var position = raw.startIndex
        while position < raw.endIndex {
            guard raw[position] == UInt8(ascii: "&") else {
                decoded.append(raw[position])
                position += 1
                continue
            }
            guard let semicolon = raw[position...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
                throw error("an '&' that starts no entity (write &amp;)")
            }
            let entity = String(decoding: raw[(position + 1)..<semicolon], as: UTF8.self)
            decoded += Array(try Self.expand(entity, error: error("unknown entity &\(entity);")).utf8)
            position = semicolon + 1
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    /// The text of the entity `name` (without `&` and `;`).
    private static func expand(_ name: String, error: TrackError) throws(TrackError) -> String {
        switch name {
        case "lt": return "<"
        case "gt": return ">"
        case "amp": return "&"
        case "quot": return "\""
        case "apos": return "'"
        default:
            let digits = name.dropFirst()
            let value = name.hasPrefix("#x") ? UInt32(digits.dropFirst(), radix: 16) : name.hasPrefix("#") ? UInt32(digits) : nil
            guard let value, value != 0, let scalar = Unicode.Scalar(value) else { throw error }
            return String(Character(scalar))
        }
    }

    // MARK: Bytes

    /// Moves one byte on, counting lines.
    private mutating func advance() {
        if bytes[index] == 0x0A { line += 1 }
        index += 1
    }

    /// Skips spaces, tabs and line breaks; whether there were any.
    @discardableResult
    private mutating func skipSpace() -> Bool {
        let start = index
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { advance() }
        return index > start
    }

    private func matches(_ text: StaticString) -> Bool {
        let pattern = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        return bytes.count - index >= pattern.count && bytes[index..<(index + pattern.count)].elementsEqual(pattern)
    }

    private mutating func skip(past terminator: StaticString, what: String) throws(TrackError) {
        let line = self.line
        while index < bytes.count {
            if matches(terminator) {
                index += terminator.utf8CodeUnitCount
                return
            }
            advance()
        }
        throw error("the file ends inside a \(what)", line: line)
    }

    private mutating func expect(_ character: Unicode.Scalar, in context: String) throws(TrackError) {
        guard index < bytes.count, bytes[index] == UInt8(ascii: character) else {
            throw error("expected '\(character)' in \(context)")
        }
        index += 1
    }

    private func error(_ reason: String, line: Int? = nil) -> TrackError {
        TrackError("not a readable GPX file: line \(line ?? self.line): \(reason)")
    }
}
