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
    /// When the filter is literal levels followed only by `+` levels (`owntracks/+/+`):
    /// the literal levels, and how many `+` follow. A device's topic is then those levels
    /// and the device itself, when the device has one level a `+`: no need to split it
    /// into levels and join them again.
    private let literalsThenSingles: LiteralsThenSingles?

    /// A filter's literal levels (each followed by its `/`) and the number of `+` levels
    /// after them.
    private struct LiteralsThenSingles: Sendable, Equatable {
        var prefix: String
        var singles: Int
    }

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
        levels = filter.split(separator: "/", omittingEmptySubsequences: false).map { level in
            switch level {
            case "+": .single
            case "#": .rest
            default: .literal(String(level))
            }
        }
        let literals = levels.prefix { if case .literal = $0 { true } else { false } }
        let singles = levels.dropFirst(literals.count)
        literalsThenSingles = !singles.isEmpty && singles.allSatisfy { $0 == .single }
            ? LiteralsThenSingles(
                prefix: literals.map { if case .literal(let text) = $0 { text + "/" } else { "" } }.joined(),
                singles: singles.count)
            : nil
    }

    /// The topic a device publishes its locations to: the filter with its wildcards
    /// replaced by the device's levels (`alice/phone` → `owntracks/alice/phone`); nil
    /// when the device's levels do not fit the filter's wildcards.
    package func base(of device: String) -> String? {
        base(of: device, then: nil)
    }

    /// `base(of:)` with the level `suffix` after it, made in one allocation.
    private func base(of device: String, then suffix: String?) -> String? {
        if let shortcut = literalsThenSingles {
            let prefix = shortcut.prefix
            var slashes = 0
            for byte in device.utf8 where byte == UInt8(ascii: "/") { slashes += 1 }
            guard slashes == shortcut.singles - 1 else { return nil }
            var topic = prefix
            topic.reserveCapacity(prefix.utf8.count + device.utf8.count + 1 + (suffix?.utf8.count ?? 0))
            topic.append(device)
            if let suffix {
                topic.append("/")
                topic.append(suffix)
            }
            return topic
        }
        var remaining = device.split(separator: "/", omittingEmptySubsequences: false)[...]
        var topic = ""
        topic.reserveCapacity(filter.utf8.count + device.utf8.count + (suffix.map { $0.utf8.count + 1 } ?? 0))
        for (position, level) in levels.enumerated() {
            if position > 0 { topic.append("/") }
            switch level {
            case .single:
                guard let next = remaining.popFirst() else { return nil }
                topic.append(contentsOf: next)
            case .rest:
                guard !remaining.isEmpty else { return nil }
                topic.append(remaining.joined(separator: "/"))
                remaining = []
            case .literal(let text):
                topic.append(text)
            }
        }
        guard remaining.isEmpty else { return nil }
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
