/// Writes `JSON` values as UTF-8 text.
///
/// Compact output is for payloads; `pretty` output (two-space indentation, one member a
/// line) with `sortedKeys` is for files people read and keep in git. Integral numbers
/// print without a fraction ("3", not "3.0"); other numbers in the shortest form that
/// reads back to the same Double.
public struct JSONWriter: Sendable {
    public var pretty: Bool
    public var sortedKeys: Bool

    public init(pretty: Bool = false, sortedKeys: Bool = false) {
        self.pretty = pretty
        self.sortedKeys = sortedKeys
    }

    /// The UTF-8 bytes of `value`; pretty output ends with a newline.
    public func bytes(_ value: JSON) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        write(value, into: &out, indent: 0)
        if pretty { out.append(0x0A) }
        return out
    }

    /// The text of `value`.
    public func string(_ value: JSON) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// Appends `value` to `out` as it is written `indent` levels deep inside a larger
    /// value (pretty output indents its lines after the first by that much more), so a
    /// caller can assemble a document from parts, some of them written before.
    public func append(_ value: JSON, to out: inout [UInt8], indent: Int) {
        write(value, into: &out, indent: indent)
    }

    private func write(_ value: JSON, into out: inout [UInt8], indent: Int) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): JSONWriter.appendNumber(number, to: &out)
        case .string(let text): JSONWriter.appendString(text, to: &out)
        case .array(let elements):
            if elements.isEmpty {
                out.append(contentsOf: "[]".utf8)
                return
            }
            out.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent: indent + 1)
                write(element, into: &out, indent: indent + 1)
            }
            newline(&out, indent: indent)
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            if object.members.isEmpty {
                out.append(contentsOf: "{}".utf8)
                return
            }
            let members = sortedKeys ? object.members.sorted { $0.key < $1.key } : object.members
            out.append(UInt8(ascii: "{"))
            for (position, member) in members.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                newline(&out, indent: indent + 1)
                JSONWriter.appendString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                if pretty { out.append(UInt8(ascii: " ")) }
                write(member.value, into: &out, indent: indent + 1)
            }
            newline(&out, indent: indent)
            out.append(UInt8(ascii: "}"))
        }
    }

    private func newline(_ out: inout [UInt8], indent: Int) {
        guard pretty else { return }
        out.append(0x0A)
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent * 2))
    }

    /// Appends a number as JSON (`JSONNumberText`); non-finite numbers, which JSON cannot
    /// hold, become null.
    public static func appendNumber(_ number: Double, to out: inout [UInt8]) {
        JSONNumberText.append(number, to: &out)
    }

    /// A number as JSON writes it, for messages: "100", not "100.0".
    public static func text(of number: Double) -> String {
        var bytes: [UInt8] = []
        appendNumber(number, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends a string as a quoted JSON string with the escapes JSON requires.
    public static func appendString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // The string's own UTF-8 (a native string's storage, no copy), scanned for what
        // must be escaped and copied between in runs: every outbound message writes a
        // dozen strings, and appending them byte by byte through `text.utf8` took 2.4 %
        // of the bridge's CPU on the side-by-side traffic.
        var text = text
        text.withUTF8 { appendEscaped($0, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    /// Appends `bytes` (UTF-8) with what JSON requires escaped: the quote, the backslash
    /// and the control characters.
    private static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
        var runStart = 0
        for index in bytes.indices {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            runStart = index + 1
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0x0A: out.append(contentsOf: "\\n".utf8)
            case 0x0D: out.append(contentsOf: "\\r".utf8)
            case 0x09: out.append(contentsOf: "\\t".utf8)
            case 0x08: out.append(contentsOf: "\\b".utf8)
            case 0x0C: out.append(contentsOf: "\\f".utf8)
            default:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hexDigit(byte >> 4))
                out.append(hexDigit(byte & 0x0F))
            }
        }
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart...]))
    }

    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }
}
