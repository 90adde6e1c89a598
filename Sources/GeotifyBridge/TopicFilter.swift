/// An MQTT subscription filter that also names devices: the topic levels a message's
/// topic matched with `+` and `#` wildcards, joined by `/`, are its device identifier.
///
/// `owntracks/+/+` turns `owntracks/alice/phone` into `alice/phone`;
/// `geotify/location/#` turns `geotify/location/van/7` into `van/7`.
public struct TopicFilter: Sendable, Equatable, CustomStringConvertible {
    public let filter: String
    private let levels: [Substring]

    /// A filter; throws when `filter` is not a valid MQTT filter or has no wildcard
    /// to take a device identifier from.
    public init(_ filter: String) throws(InputError) {
        let levels = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, level) in levels.enumerated() {
            if level.contains("#") && (level != "#" || index != levels.count - 1) {
                throw InputError(.invalidTopic, "in the filter \"\(filter)\", '#' must be a whole level and the last one")
            }
            if level.contains("+") && level != "+" {
                throw InputError(.invalidTopic, "in the filter \"\(filter)\", '+' must be a whole level")
            }
        }
        guard levels.contains(where: { $0 == "+" || $0 == "#" }) else {
            throw InputError(.invalidTopic, "the filter \"\(filter)\" has no '+' or '#' level to take the device identifier from")
        }
        self.filter = filter
        self.levels = levels
    }

    public var description: String { filter }

    /// The device identifier when `topic` matches the filter, nil otherwise.
    public func device(in topic: String) -> String? {
        device(inLevels: topic.split(separator: "/", omittingEmptySubsequences: false))
    }

    /// The device identifier when a topic split into `parts` (its levels) matches the
    /// filter, nil otherwise: for trying several filters on one topic, split once.
    public func device(inLevels parts: [Substring]) -> String? {
        var captured: [Substring] = []
        for (index, level) in levels.enumerated() {
            if level == "#" {
                guard index < parts.count else { return nil }
                captured.append(contentsOf: parts[index...])
                return captured.joined(separator: "/")
            }
            guard index < parts.count else { return nil }
            if level == "+" {
                captured.append(parts[index])
            } else if parts[index] != level {
                return nil
            }
        }
        return parts.count == levels.count ? captured.joined(separator: "/") : nil
    }
}
