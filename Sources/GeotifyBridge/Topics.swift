import GeotifyCore

/// The names of the topics the bridge publishes to and takes commands from, all under
/// one prefix (`geotify` by default) so a deployment can run several bridges.
///
/// When several instances share the devices (`shard`), what belongs to one instance
/// rather than to a device lives under `<prefix>/shard/<index>/`: its status (and will),
/// its statistics, and its part of each shared fence's occupancy. Per-device topics stay
/// where they are, since each device has one owner.
package struct Topics: Sendable, Equatable {
    package let prefix: String
    /// This instance, when several share the devices; nil for one instance (or `0/1`).
    package let shard: ShardAssignment?

    package init(prefix: String = "geotify", shard: ShardAssignment? = nil) {
        self.prefix = prefix
        self.shard = (shard?.count ?? 1) > 1 ? shard : nil
    }

    /// `levels` joined by `/`, made in one allocation and written in place: an
    /// interpolation such as `"\(prefix)/event/\(device)"` guesses its length and grows
    /// its buffer (two or three allocations for a topic), and appending level after level
    /// to a reserved string goes through `String.append`'s checks each time (3 300
    /// instructions for a presence topic against 1 400 copying the bytes, measured with
    /// callgrind), and a topic is made for every message published.
    @inline(__always)
    package static func path(_ levels: String...) -> String {
        var length = max(0, levels.count - 1)
        for level in levels { length += level.utf8.count }
        return String(unsafeUninitializedCapacity: length) { buffer in
            var written = 0
            for (position, level) in levels.enumerated() {
                if position > 0 {
                    buffer[written] = UInt8(ascii: "/")
                    written += 1
                }
                var level = level
                level.withUTF8 { bytes in
                    _ = UnsafeMutableBufferPointer(rebasing: buffer[written..<(written + bytes.count)]).initialize(from: bytes)
                    written += bytes.count
                }
            }
            return written
        }
    }

    /// Notifications of `device`: `geotify/event/<device>`.
    package func event(_ device: String) -> String { Topics.path(prefix, "event", device) }
    /// The retained badge count of `device`: `geotify/badge/<device>`.
    package func badge(_ device: String) -> String { Topics.path(prefix, "badge", device) }
    /// The bridge's retained `online` / `offline`: `geotify/status`, or
    /// `geotify/shard/<index>/status` for one of several instances.
    package var status: String { "\(instancePrefix)/status" }
    /// The bridge's retained statistics: `geotify/stats`, or `geotify/shard/<index>/stats`.
    package var stats: String { "\(instancePrefix)/stats" }
    /// Refused input and other failures: `geotify/error`.
    package var error: String { "\(prefix)/error" }
    /// Replies to commands for `device`: `geotify/reply/<device>`.
    package func reply(_ device: String) -> String { "\(prefix)/reply/\(device)" }
    /// Commands for devices: `geotify/cmd/<device>`.
    package var commands: String { "\(prefix)/cmd/#" }

    /// How many of this instance's devices are inside the shared `fence` of `owner`: the
    /// total `geotify/occupancy/<owner>/<fence>` for one instance, this instance's part
    /// `geotify/shard/<index>/occupancy/<owner>/<fence>` for one of several.
    package func occupancy(owner: String, fence: String) -> String { "\(instancePrefix)/occupancy/\(owner)/\(fence)" }
    /// Instance `index`'s part of the occupancy of the shared `fence` of `owner`:
    /// `geotify/shard/<index>/occupancy/<owner>/<fence>`.
    package func occupancy(ofShard index: Int, owner: String, fence: String) -> String {
        "\(prefix)/shard/\(index)/occupancy/\(owner)/\(fence)"
    }
    /// The number of devices of every instance inside the shared `fence` of `owner`:
    /// `geotify/occupancy/<owner>/<fence>`.
    package func occupancyTotal(owner: String, fence: String) -> String { "\(prefix)/occupancy/\(owner)/\(fence)" }
    /// The occupancy parts this instance reads back, nil for one instance: instance 0
    /// reads every instance's (to publish the totals), the others their own (to correct
    /// what a crash or a reshard left retained).
    package var occupancyParts: String? {
        guard let shard else { return nil }
        return "\(prefix)/shard/\(shard.index == 0 ? "+" : String(shard.index))/occupancy/#"
    }

    /// The instance, shared set and fence of an occupancy part topic; nil for any other.
    package func occupancyPart(_ topic: String) -> (shard: Int, owner: String, fence: String)? {
        let head = "\(prefix)/shard/"
        guard topic.hasPrefix(head) else { return nil }
        let levels = topic.dropFirst(head.count).split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count == 4, levels[1] == "occupancy", levels[0].count <= 4, let index = Int(levels[0]), index >= 0 else { return nil }
        return (index, String(levels[2]), String(levels[3]))
    }

    /// `geotify`, or `geotify/shard/<index>` for one of several instances.
    package var instancePrefix: String {
        shard.map { "\(prefix)/shard/\($0.index)" } ?? prefix
    }
}
