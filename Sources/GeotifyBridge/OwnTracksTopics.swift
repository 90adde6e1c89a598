import GeotifyCore

/// The OwnTracks topics of a device, rebuilt from the filter its positions arrive on
/// (the `owntracksTopic` setting, `owntracks/+/+` by default): the app publishes
/// locations to its base topic `owntracks/<user>/<device>`, transitions to
/// `<base>/event`, and takes remote commands on `<base>/cmd`
/// (https://owntracks.org/booklet/tech/json/, "Topics").
package struct OwnTracksTopics: Sendable, Equatable {
    /// The subscription filter OwnTracks positions arrive on.
    package let filter: String
    /// The filter's levels, split once: a device's topics are made on every transition.
    private let levels: [Level]

    /// A level of the filter.
    private enum Level: Sendable, Equatable {
        case literal(String)
        /// `+`: one level of the device.
        case single
        /// `#`: the rest of the device's levels, at least one.
        case rest
    }

    package init(filter: String = "owntracks/+/+") {
        self.filter = filter
        levels = TopicLevels.split(filter).map { level in
            TopicLevels.isPlus(level) ? .single : TopicLevels.isHash(level) ? .rest : .literal(String(Substring(level)))
        }
    }

    /// The topic a device publishes its locations to: the filter with its wildcards
    /// replaced by the device's levels (`alice/phone` → `owntracks/alice/phone`); nil
    /// when the device's levels do not fit the filter's wildcards.
    package func base(of device: String) -> String? {
        base(of: device, then: nil)
    }

    /// `base(of:)` with the level `suffix` after it, made in one allocation: the device's
    /// levels are read in place as the filter's wildcards take them, not split into an
    /// array first (a device's topics are made on every transition).
    private func base(of device: String, then suffix: String?) -> String? {
        let utf8 = device.utf8
        // Where the device's next level starts; nil once every level is taken (a device
        // ending in "/" has an empty last level, which is still one).
        var next: String.Index? = utf8.startIndex
        var topic = ""
        topic.reserveCapacity(filter.utf8.count + utf8.count + (suffix.map { $0.utf8.count + 1 } ?? 0))
        for (position, level) in levels.enumerated() {
            if position > 0 { topic.append("/") }
            switch level {
            case .single:
                guard let start = next else { return nil }
                let end = utf8[start...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
                topic.append(contentsOf: device[start..<end])
                next = end == utf8.endIndex ? nil : utf8.index(after: end)
            case .rest:
                guard let start = next else { return nil }
                topic.append(contentsOf: device[start...])
                next = nil
            case .literal(let text):
                topic.append(text)
            }
        }
        guard next == nil else { return nil }
        if let suffix {
            topic.append("/")
            topic.append(suffix)
        }
        return topic
    }

    /// Where the device's transitions go: `owntracks/<user>/<device>/event`.
    package func event(of device: String) -> String? {
        base(of: device, then: "event")
    }

    /// Where the device takes remote commands: `owntracks/<user>/<device>/cmd`.
    package func command(of device: String) -> String? {
        base(of: device, then: "cmd")
    }
}
