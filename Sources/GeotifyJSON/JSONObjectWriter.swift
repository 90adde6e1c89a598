/// Writes one JSON object member by member, straight into its bytes, in the order the
/// members come: the same bytes as `JSONWriter` (compact) gives for a `JSONObject` with
/// those members, without building the object first. The messages made on every
/// transition (events, state documents, OwnTracks transitions) are written so: building
/// a `JSONObject` (its members array, each value in an enum) and then walking it cost
/// about as much again as the writing.
///
/// The caller adds each key once, as `JSONObject` would keep it once. Keys are literals
/// of the code that writes the message (`StaticString`), written as they are: a key that
/// JSON would have to escape (a quote, a backslash, a control character) traps in a
/// debug build. Every message built writes a dozen keys, and scanning each for escapes through
/// `String`'s UTF-8 was a twentieth of the lane's instructions.
package struct JSONObjectWriter: Sendable {
    private var out: [UInt8]
    private var empty = true

    /// A writer with room for about `capacity` bytes.
    package init(capacity: Int = 256) {
        out = []
        out.reserveCapacity(capacity)
        out.append(UInt8(ascii: "{"))
    }

    /// A writer of an object inside another, appending to the outer one's `bytes`.
    private init(continuing bytes: consuming [UInt8]) {
        out = bytes
        out.append(UInt8(ascii: "{"))
    }

    private mutating func key(_ key: StaticString) {
        if !empty { out.append(UInt8(ascii: ",")) }
        empty = false
        out.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes in
            #if DEBUG
            // Not `assert`: this module is optimised in debug builds too (Package.swift),
            // which drops it.
            if bytes.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
                fatalError("a key JSON must escape: \(key)")
            }
            #endif
            out.append(contentsOf: bytes)
        }
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
    }

    /// Adds `"key":"value"`.
    package mutating func string(_ key: StaticString, _ value: String) {
        self.key(key)
        JSONWriter.appendString(value, to: &out)
    }

    /// Adds `"key":number` (`JSONWriter.appendNumber`: integral numbers without a
    /// fraction, non-finite ones as null).
    package mutating func number(_ key: StaticString, _ value: Double) {
        self.key(key)
        JSONWriter.appendNumber(value, to: &out)
    }

    /// Adds `"key":[...]`, one object for each of `elements`, written by `body`.
    package mutating func objects<Elements: Sequence>(
        _ key: StaticString, _ elements: Elements, _ body: (inout JSONObjectWriter, Elements.Element) -> Void
    ) {
        self.key(key)
        out.append(UInt8(ascii: "["))
        var first = true
        for element in elements {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            var bytes: [UInt8] = []
            swap(&bytes, &out)
            var object = JSONObjectWriter(continuing: consume bytes)
            body(&object, element)
            object.out.append(UInt8(ascii: "}"))
            swap(&object.out, &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// The object's bytes.
    package consuming func bytes() -> [UInt8] {
        out.append(UInt8(ascii: "}"))
        return out
    }
}
