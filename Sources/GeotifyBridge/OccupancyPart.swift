import GeotifyMQTT

/// One instance's count of its own devices inside a shared fence, as read back from the
/// broker on `<prefix>/shard/<index>/occupancy/<owner>/<fence>` (retained decimal text,
/// empty when cleared): the parts whose sum is the fence's occupancy when several
/// instances share the devices.
package struct OccupancyPart: Sendable, Equatable {
    /// The instance that published it.
    package var shard: Int
    /// The shared set: "shared", or a group's name.
    package var owner: String
    package var fence: String
    /// The count; nil when the part was cleared (an empty retained message).
    package var count: Int?
    /// Whether the broker kept it from before the subscription (a retained message).
    package var retained: Bool

    package init(shard: Int, owner: String, fence: String, count: Int?, retained: Bool) {
        self.shard = shard
        self.owner = owner
        self.fence = fence
        self.count = count
        self.retained = retained
    }

    /// The part `message` carries, nil when its topic is not a part topic of `topics` or
    /// its payload is not a count.
    package init?(_ message: MQTTMessage, topics: Topics) {
        guard let (shard, owner, fence) = topics.occupancyPart(message.topic) else { return nil }
        var count: Int?
        if !message.payload.isEmpty {
            guard message.payload.count <= 9, message.payload.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            count = Int(String(decoding: message.payload, as: UTF8.self))
        }
        self.init(shard: shard, owner: owner, fence: fence, count: count, retained: message.retain)
    }
}
