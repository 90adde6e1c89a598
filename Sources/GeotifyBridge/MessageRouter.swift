import GeotifyCore
import GeotifyMQTT

/// Where an incoming message goes, decided from its topic alone (before any decoding):
/// an OwnTracks or plain position, or a command, of which device, on which lane; or
/// nowhere (a topic no filter matches), or refused (too deep, no usable device).
///
/// A device always lands on the same lane (a stable hash of its id), so its messages
/// are handled in order. When several instances share the devices (`shard`), the
/// positions and commands of devices another instance owns are dropped here, from the
/// topic alone, before anything is decoded or validated: every instance receives every
/// message, and this is all a message of another shard costs.
package struct MessageRouter: Sendable {
    /// What became of a message.
    package enum Outcome: Sendable {
        case lane(Int, Inbound)
        /// A position or command of a device another instance owns.
        case otherShard
        /// An instance's part of a shared fence's occupancy (see `ShardOccupancy`).
        case occupancy(OccupancyPart)
        /// A message no filter of the bridge's routes.
        case unrouted
        case refused(InputError, topic: String)
    }

    /// The most messages handed to one lane in one go from the network thread.
    static let batchLimit = 256

    private let ownTracks: TopicFilter
    private let location: TopicFilter
    private let commands: TopicFilter
    private let maximumTopicDepth: Int
    private let laneCount: Int
    private let shard: ShardAssignment?
    private let topics: Topics
    /// `<topicPrefix>/error`: never read as a position, even by a filter that matches it
    /// (which the settings refuse, `PublishedTopics`), since refusing one publishes a new
    /// error there, and so on forever. Compared only once a position filter matched.
    private let errorTopic: String
    /// The filters in matching order, as `DeviceSuffix`es, when every one has that shape:
    /// what finds another shard's message without splitting its topic.
    private let suffixes: [DeviceSuffix]?

    /// A router for the filters and limits of `settings`; throws when a filter is not
    /// usable (checked here, so a bad setting stops the start with its reason).
    package init(settings: Settings, topics: Topics) throws(InputError) {
        ownTracks = try TopicFilter(settings.ownTracksTopic)
        location = try TopicFilter(settings.locationTopic)
        commands = try TopicFilter(topics.commands)
        maximumTopicDepth = settings.maximumTopicDepth
        laneCount = max(1, settings.lanes)
        shard = topics.shard
        self.topics = topics
        errorTopic = topics.error
        let shapes = [settings.ownTracksTopic, settings.locationTopic, topics.commands].map(DeviceSuffix.init)
        suffixes = shapes.contains { $0 == nil } ? nil : shapes.compactMap { $0 }
    }

    /// Routes `message`, which arrived at `arrival` (seconds since 1970). The message is
    /// taken, not borrowed: a routed one's topic and payload move into its `Inbound`
    /// rather than being copied (each copy retained and later released its strings and
    /// arrays, for every position).
    package func route(_ message: __owned MQTTMessage, arrival: Double) -> Outcome {
        if let shard, let suffixes, let hash = Self.deviceHash(message.topic, suffixes),
           ShardAssignment.shard(ofHash: hash, among: shard.count) != shard.index {
            return .otherShard
        }
        guard Self.levels(of: message.topic) <= maximumTopicDepth else {
            return .refused(InputError(.invalidTopic, "the topic has more than \(maximumTopicDepth) levels (maximumTopicDepth)"), topic: message.topic)
        }
        let route: Inbound.Route
        let device: String
        if let found = ownTracks.device(inTopic: message.topic) {
            guard message.topic != errorTopic else { return .unrouted }
            (route, device) = (.location(.ownTracks), found)
        } else if let found = location.device(inTopic: message.topic) {
            guard message.topic != errorTopic else { return .unrouted }
            (route, device) = (.location(.plain), found)
        } else if let found = commands.device(inTopic: message.topic) {
            (route, device) = (.command, found)
        } else if let part = OccupancyPart(message, topics: topics) {
            return .occupancy(part)
        } else {
            return .unrouted
        }
        if let shard, !shard.owns(device) { return .otherShard }
        if let problem = Identifier.problem(device: device) {
            return .refused(InputError(.invalidTopic, "no usable device in the topic: \(problem)"), topic: message.topic)
        }
        return .lane(
            MessageRouter.lane(of: device, among: laneCount),
            Inbound(route: route, device: device, message: message, arrival: arrival))
    }

    /// How many levels `topic` has: one more than its slashes, counted over the string's
    /// own UTF-8 (iterating the UTF-8 view went through its generic iterator, about 1 %
    /// of the bridge's CPU under position traffic).
    static func levels(of topic: String) -> Int {
        var topic = topic
        return topic.withUTF8 { bytes in bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) } }
    }

    /// The device hash of `topic` by the first of `suffixes` it matches, nil when it
    /// matches none.
    private static func deviceHash(_ topic: String, _ suffixes: [DeviceSuffix]) -> UInt64? {
        for suffix in suffixes {
            if let hash = suffix.deviceHash(topic) { return hash }
        }
        return nil
    }

    /// The lane of `device`: a stable hash, so a device always lands on the same one.
    package static func lane(of device: String, among count: Int) -> Int {
        Int(StableHash.fnv1a(device) % UInt64(count))
    }

    /// A filter whose wildcards all come last (`owntracks/+/+`, `geotify/location/#`): the
    /// device of a matching topic is the topic after the filter's literal head, so its
    /// stable hash can be taken from the topic's bytes as they are, with no allocation.
    private struct DeviceSuffix: Sendable {
        /// The literal levels with their slashes (`owntracks/`).
        let head: [UInt8]
        /// How many `+` levels follow.
        let singles: Int
        /// Whether a `#` ends the filter.
        let rest: Bool

        init?(_ filter: String) {
            let levels = TopicLevels.split(filter)
            let rest = levels.last.map { TopicLevels.isHash($0) } ?? false
            guard let first = levels.firstIndex(where: { TopicLevels.isPlus($0) || TopicLevels.isHash($0) }),
                  levels[first...].dropLast(rest ? 1 : 0).allSatisfy({ TopicLevels.isPlus($0) }) else { return nil }
            head = levels[..<first].flatMap { Array($0) + [UInt8(ascii: "/")] }
            self.rest = rest
            singles = levels.count - first - (rest ? 1 : 0)
        }

        /// FNV-1a of the device in `topic` (`StableHash.fnv1a`), nil when the topic does
        /// not match or has an empty level (left to the full route, which refuses it).
        func deviceHash(_ topic: String) -> UInt64? {
            var bytes = topic.utf8.makeIterator()
            for byte in head {
                guard bytes.next() == byte else { return nil }
            }
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            var levels = 1
            var empty = true
            while let byte = bytes.next() {
                if byte == UInt8(ascii: "/") {
                    guard !empty else { return nil }
                    levels += 1
                    empty = true
                } else {
                    empty = false
                }
                hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            }
            guard !empty, rest ? levels > singles : levels == singles else { return nil }
            return hash
        }
    }
}
