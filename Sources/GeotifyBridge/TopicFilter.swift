import GeotifyCore

/// An MQTT subscription filter that also names devices: the topic levels a message's
/// topic matched with `+` and `#` wildcards, joined by `/`, are its device identifier.
///
/// `owntracks/+/+` turns `owntracks/alice/phone` into `alice/phone`;
/// `geotify/location/#` turns `geotify/location/van/7` into `van/7`.
///
/// Matching runs for every message, so it works on the topic's bytes in one pass and
/// allocates nothing but the device's own string, when the filter's wildcards are
/// contiguous (as in every usual filter); other filters are matched level by level.
/// Either way levels are cut and compared byte by byte, as the broker matches topics
/// (`TopicLevels`).
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
        let levels = TopicLevels.split(filter)
        switch TopicLevels.wildcardMisuse(in: levels) {
        case .hashNotWholeLastLevel?:
            throw InputError(.invalidTopic, "in the filter \"\(filter)\", '#' must be a whole level and the last one")
        case .plusNotWholeLevel?:
            throw InputError(.invalidTopic, "in the filter \"\(filter)\", '+' must be a whole level")
        case nil:
            break
        }
        let patterns: [Pattern] = levels.map { level in
            TopicLevels.isPlus(level) ? .plus : TopicLevels.isHash(level) ? .hash : .literal(Array(level))
        }
        let wildcards = patterns.indices.filter { patterns[$0] == .plus || patterns[$0] == .hash }
        guard let first = wildcards.first, let last = wildcards.last else {
            throw InputError(.invalidTopic, "the filter \"\(filter)\" has no '+' or '#' level to take the device identifier from")
        }
        self.filter = filter
        self.levels = patterns
        pattern = last - first + 1 == wildcards.count ? patterns : nil
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
        let parts = TopicLevels.split(topic)
        var captured: [Substring.UTF8View] = []
        for (index, level) in levels.enumerated() {
            guard index < parts.count else { return nil }
            switch level {
            case .hash:
                captured.append(contentsOf: parts[index...])
                return TopicLevels.joined(captured)
            case .plus:
                captured.append(parts[index])
            case .literal(let literal):
                guard parts[index].elementsEqual(literal) else { return nil }
            }
        }
        return parts.count == levels.count ? TopicLevels.joined(captured) : nil
    }
}
