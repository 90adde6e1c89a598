/// An MQTT subscription filter that also names devices: the topic levels a message's
/// topic matched with `+` and `#` wildcards, joined by `/`, are its device identifier.
///
/// `owntracks/+/+` turns `owntracks/alice/phone` into `alice/phone`;
/// `geotify/location/#` turns `geotify/location/van/7` into `van/7`.
///
/// Matching runs for every message, so it works on the topic's bytes in one pass and
/// allocates nothing but the device's own string, when the filter's wildcards are
/// contiguous (as in every usual filter); other filters are matched level by level.
/// Either way levels are cut and compared byte by byte, as the broker matches topics: a
/// character of Swift's joins a combining mark to the '/' before it, and compares
/// canonically equivalent text as equal.
package struct TopicFilter: Sendable, Equatable, CustomStringConvertible {
    package let filter: String
    /// The filter's levels, for matching level by level.
    private let levels: [Pattern]
    /// The same, only when the wildcards are contiguous, so the device is one stretch of
    /// the topic, matched in one pass.
    private let pattern: [Pattern]?

    /// One level of a filter, for byte matching.
    private enum Pattern: Sendable, Equatable {
        case literal([UInt8])
        case plus
        case hash
    }

    /// A filter; throws when `filter` is not a valid MQTT filter or has no wildcard
    /// to take a device identifier from.
    package init(_ filter: String) throws(InputError) {
        let (plus, hash) = ([UInt8(ascii: "+")], [UInt8(ascii: "#")])
        let levels = filter.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).map(Array.init)
        for (index, level) in levels.enumerated() {
            if level.contains(UInt8(ascii: "#")) && (level != hash || index != levels.count - 1) {
                throw InputError(.invalidTopic, "in the filter \"\(filter)\", '#' must be a whole level and the last one")
            }
            if level.contains(UInt8(ascii: "+")) && level != plus {
                throw InputError(.invalidTopic, "in the filter \"\(filter)\", '+' must be a whole level")
            }
        }
        guard levels.contains(where: { $0 == plus || $0 == hash }) else {
            throw InputError(.invalidTopic, "the filter \"\(filter)\" has no '+' or '#' level to take the device identifier from")
        }
        self.filter = filter
        self.levels = levels.map { level in level == plus ? .plus : level == hash ? .hash : .literal(level) }
        let wildcards = levels.indices.filter { levels[$0] == plus || levels[$0] == hash }
        let contiguous = wildcards.last! - wildcards.first! + 1 == wildcards.count
        pattern = contiguous ? self.levels : nil
    }

    /// The device identifier when `topic` matches the filter, nil otherwise; the same as
    /// `device(in:)`, in one pass over its bytes.
    package func device(inTopic topic: String) -> String? {
        guard let pattern else { return device(in: topic) }
        var topic = topic
        // The device is made from the matched bytes where they are: no index into the
        // topic, no substring of it.
        return topic.withUTF8 { bytes in
            guard let range = TopicFilter.match(bytes, pattern) else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }
    }

    /// Where the device is in `bytes` (a topic's UTF-8), when they match `pattern`.
    private static func match(_ bytes: UnsafeBufferPointer<UInt8>, _ pattern: [Pattern]) -> Range<Int>? {
        var position = 0
        var start: Int?
        var end = 0
        for (index, level) in pattern.enumerated() {
            if index > 0 {
                guard position < bytes.count, bytes[position] == UInt8(ascii: "/") else { return nil }
                position += 1
            }
            switch level {
            case .hash:
                return (start ?? position)..<bytes.count
            case .plus:
                if start == nil { start = position }
                while position < bytes.count && bytes[position] != UInt8(ascii: "/") { position += 1 }
                end = position
            case .literal(let literal):
                guard position + literal.count <= bytes.count else { return nil }
                for offset in literal.indices where bytes[position + offset] != literal[offset] { return nil }
                position += literal.count
                guard position == bytes.count || bytes[position] == UInt8(ascii: "/") else { return nil }
            }
        }
        guard position == bytes.count, let start else { return nil }
        return start..<end
    }

    package var description: String { filter }

    /// The device identifier when `topic` matches the filter, nil otherwise, level by
    /// level (the same as `device(inTopic:)`, for any filter).
    package func device(in topic: String) -> String? {
        let parts = topic.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        var captured: [Substring.UTF8View] = []
        for (index, level) in levels.enumerated() {
            guard index < parts.count else { return nil }
            switch level {
            case .hash:
                captured.append(contentsOf: parts[index...])
                return TopicFilter.joined(captured)
            case .plus:
                captured.append(parts[index])
            case .literal(let literal):
                guard parts[index].elementsEqual(literal) else { return nil }
            }
        }
        return parts.count == levels.count ? TopicFilter.joined(captured) : nil
    }

    /// `levels` joined by '/': a device identifier.
    private static func joined(_ levels: [Substring.UTF8View]) -> String {
        var bytes: [UInt8] = []
        for (index, level) in levels.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: "/")) }
            bytes.append(contentsOf: level)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
