import GeotifyCore
import GeotifyMQTT

/// Where an incoming message goes, decided from its topic alone (before any decoding):
/// an OwnTracks or plain position, or a command, of which device, on which lane; or
/// nowhere (a topic no filter matches), or refused (too deep, no usable device).
///
/// A device always lands on the same lane (a stable hash of its id), so its messages
/// are handled in order.
package struct MessageRouter: Sendable {
    /// What became of a message.
    package enum Outcome: Sendable {
        case lane(Int, Inbound)
        case unrouted
        case refused(InputError)
    }

    /// The most messages handed to one lane in one go from the network thread.
    static let batchLimit = 256

    private let ownTracks: TopicFilter
    private let location: TopicFilter
    private let commands: TopicFilter
    private let maximumTopicDepth: Int
    private let laneCount: Int

    /// A router for the filters and limits of `settings`; throws when a filter is not
    /// usable (checked here, so a bad setting stops the start with its reason).
    package init(settings: Settings, topics: Topics) throws(InputError) {
        ownTracks = try TopicFilter(settings.ownTracksTopic)
        location = try TopicFilter(settings.locationTopic)
        commands = try TopicFilter(topics.commands)
        maximumTopicDepth = settings.maximumTopicDepth
        laneCount = max(1, settings.lanes)
    }

    /// Routes `message`, which arrived at `arrival` (seconds since 1970).
    package func route(_ message: MQTTMessage, arrival: Double) -> Outcome {
        var depth = 1
        for byte in message.topic.utf8 where byte == UInt8(ascii: "/") { depth += 1 }
        guard depth <= maximumTopicDepth else {
            return .refused(InputError(.invalidTopic, "the topic has more than \(maximumTopicDepth) levels (maximumTopicDepth)"))
        }
        let route: Inbound.Route
        let device: String
        if let found = ownTracks.device(inTopic: message.topic) {
            (route, device) = (.location(.ownTracks), found)
        } else if let found = location.device(inTopic: message.topic) {
            (route, device) = (.location(.plain), found)
        } else if let found = commands.device(inTopic: message.topic) {
            (route, device) = (.command, found)
        } else {
            return .unrouted
        }
        if let problem = Identifier.problem(device: device) {
            return .refused(InputError(.invalidTopic, "no usable device in the topic: \(problem)"))
        }
        return .lane(
            MessageRouter.lane(of: device, among: laneCount),
            Inbound(route: route, device: device, message: message, arrival: arrival))
    }

    /// The lane of `device`: a stable hash, so a device always lands on the same one.
    package static func lane(of device: String, among count: Int) -> Int {
        Int(StableHash.fnv1a(device) % UInt64(count))
    }
}
