/// The OwnTracks topics of a device, rebuilt from the filter its positions arrive on
/// (the `owntracksTopic` setting, `owntracks/+/+` by default): the app publishes
/// locations to its base topic `owntracks/<user>/<device>`, transitions to
/// `<base>/event`, and takes remote commands on `<base>/cmd`
/// (https://owntracks.org/booklet/tech/json/, "Topics").
package struct OwnTracksTopics: Sendable, Equatable {
    /// The subscription filter OwnTracks positions arrive on.
    package let filter: String

    package init(filter: String = "owntracks/+/+") {
        self.filter = filter
    }

    /// The topic a device publishes its locations to: the filter with its wildcards
    /// replaced by the device's levels (`alice/phone` → `owntracks/alice/phone`); nil
    /// when the device's levels do not fit the filter's wildcards.
    package func base(of device: String) -> String? {
        var remaining = device.split(separator: "/", omittingEmptySubsequences: false)[...]
        var levels: [Substring] = []
        for level in filter.split(separator: "/", omittingEmptySubsequences: false) {
            switch level {
            case "+":
                guard let next = remaining.popFirst() else { return nil }
                levels.append(next)
            case "#":
                guard !remaining.isEmpty else { return nil }
                levels.append(contentsOf: remaining)
                remaining = []
            default:
                levels.append(level)
            }
        }
        return remaining.isEmpty ? levels.joined(separator: "/") : nil
    }

    /// Where the device's transitions go: `owntracks/<user>/<device>/event`.
    package func event(of device: String) -> String? {
        base(of: device).map { "\($0)/event" }
    }

    /// Where the device takes remote commands: `owntracks/<user>/<device>/cmd`.
    package func command(of device: String) -> String? {
        base(of: device).map { "\($0)/cmd" }
    }
}
