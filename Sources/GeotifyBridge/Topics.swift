import GeotifyCore

/// The names of the topics the bridge publishes to and takes commands from, all under
/// one prefix (`geotify` by default) so a deployment can run several bridges.
///
/// When several instances share the devices (`shard`), what belongs to one instance
/// rather than to a device lives under `<prefix>/shard/<index>/`: its status (and will),
/// its statistics, and its part of each shared fence's occupancy. Per-device topics stay
/// where they are, since each device has one owner.
public struct Topics: Sendable, Equatable {
    public let prefix: String
    /// This instance, when several share the devices; nil for one instance (or `0/1`).
    public let shard: ShardAssignment?

    public init(prefix: String = "geotify", shard: ShardAssignment? = nil) {
        self.prefix = prefix
        self.shard = (shard?.count ?? 1) > 1 ? shard : nil
    }

    /// Notifications of `device`: `geotify/event/<device>`.
    public func event(_ device: String) -> String { "\(prefix)/event/\(device)" }
    /// The retained badge count of `device`: `geotify/badge/<device>`.
    public func badge(_ device: String) -> String { "\(prefix)/badge/\(device)" }
    /// The bridge's retained `online` / `offline`: `geotify/status`, or
    /// `geotify/shard/<index>/status` for one of several instances.
    public var status: String { "\(instancePrefix)/status" }
    /// The bridge's retained statistics: `geotify/stats`, or `geotify/shard/<index>/stats`.
    public var stats: String { "\(instancePrefix)/stats" }
    /// Refused input and other failures: `geotify/error`.
    public var error: String { "\(prefix)/error" }
    /// Replies to commands for `device`: `geotify/reply/<device>`.
    public func reply(_ device: String) -> String { "\(prefix)/reply/\(device)" }
    /// Commands for devices: `geotify/cmd/<device>`.
    public var commands: String { "\(prefix)/cmd/#" }

    /// How many of this instance's devices are inside the shared `fence` of `owner`: the
    /// total `geotify/occupancy/<owner>/<fence>` for one instance, this instance's part
    /// `geotify/shard/<index>/occupancy/<owner>/<fence>` for one of several.
    public func occupancy(owner: String, fence: String) -> String { "\(instancePrefix)/occupancy/\(owner)/\(fence)" }
    /// Instance `index`'s part of the occupancy of the shared `fence` of `owner`:
    /// `geotify/shard/<index>/occupancy/<owner>/<fence>`.
    public func occupancy(ofShard index: Int, owner: String, fence: String) -> String {
        "\(prefix)/shard/\(index)/occupancy/\(owner)/\(fence)"
    }
    /// The number of devices of every instance inside the shared `fence` of `owner`:
    /// `geotify/occupancy/<owner>/<fence>`.
    public func occupancyTotal(owner: String, fence: String) -> String { "\(prefix)/occupancy/\(owner)/\(fence)" }
    /// The occupancy parts this instance reads back, nil for one instance: instance 0
    /// reads every instance's (to publish the totals), the others their own (to correct
    /// what a crash or a reshard left retained).
    public var occupancyParts: String? {
        guard let shard else { return nil }
        return "\(prefix)/shard/\(shard.index == 0 ? "+" : String(shard.index))/occupancy/#"
    }

    /// The instance, shared set and fence of an occupancy part topic; nil for any other.
    public func occupancyPart(_ topic: String) -> (shard: Int, owner: String, fence: String)? {
        let head = "\(prefix)/shard/"
        guard topic.hasPrefix(head) else { return nil }
        let levels = topic.dropFirst(head.count).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 4, levels[1] == "occupancy", levels[0].count <= 4, let index = Int(levels[0]), index >= 0 else { return nil }
        return (index, String(levels[2]), String(levels[3]))
    }

    /// `geotify`, or `geotify/shard/<index>` for one of several instances.
    private var instancePrefix: String {
        shard.map { "\(prefix)/shard/\($0.index)" } ?? prefix
    }
}
