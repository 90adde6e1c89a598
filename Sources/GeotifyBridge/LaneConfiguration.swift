import GeotifyCore
import GeotifyDelivery
import GeotifyStore

/// Everything a lane core decides by that does not change while the bridge runs: the
/// evaluator's rules, the message formats, and the policies for devices, commands,
/// previews and the tracker, taken from the settings once.
package struct LaneConfiguration: Sendable {
    package var evaluator: Evaluator
    package var decoder: LocationDecoder
    package var messages: OutboundMessages
    package var presence: PresenceMessages
    /// Home Assistant discovery, nil when off: a device the file no longer names has its
    /// entities deleted by its lane before its topics are emptied (`LaneCore.forget`).
    package var discovery: HomeAssistantDiscovery?
    /// The retained topics kept for each device (`Settings.deviceTopics`).
    package var deviceTopics: Set<DeviceTopic> {
        didSet { keptTopics = DeviceTopic.bits(of: deviceTopics) }
    }
    /// `deviceTopics` as `DeviceTopic.bit`s, for `keeps`: the lane asks before each
    /// message it would build, and a set's look-up hashes the topic.
    private var keptTopics: UInt8 = 0

    /// Whether `topic` is one of `deviceTopics`.
    @inline(__always)
    package func keeps(_ topic: DeviceTopic) -> Bool {
        keptTopics & topic.bit != 0
    }
    /// Those left out: cleared after each connection (`PresenceMessages.clearances`).
    package var leftOutTopics: [DeviceTopic] { DeviceTopic.allCases.filter { !deviceTopics.contains($0) } }
    /// OwnTracks transitions for OwnTracks devices; nil when off.
    package var ownTracks: OwnTracksTransition?
    package var strictDevices: Bool
    package var commandsEnabled: Bool
    /// Which devices commands may manage (see `Settings.commandDevices`).
    package var commandDevices: [String]?
    /// MQTT v5 response topics must start with this followed by the command's device and
    /// a `/` (or be the device's own reply topic).
    package var responseTopicPrefix: String
    package var maximumPayloadBytes: Int
    /// The largest MQTT packet the broker takes: a command's reply is made to fit it
    /// (`ReplyFit`).
    package var maximumPacketBytes: Int
    /// The limits fences are validated against (radius range, fences a device).
    package var limits: FenceLimits
    package var previewTimeout: Double
    package var previewsPerDevice: Int
    package var previewsPerLane: Int
    /// The seconds a minute one device's fence changes may keep the file being written.
    package var fenceWriteBudget: Double
    /// The tracker's position follows fixes at most this often (seconds) and only when
    /// it moved at least `trackerDistance` metres; nil: only with presence changes.
    package var trackerInterval: Double?
    package var trackerDistance: Double
    /// Shared sets with more fences are evaluated but not announced fence by fence.
    package var announceLimit: Int
    /// An unnamed device not heard from for this long may be evicted to make room.
    package var evictionAge: Double
    /// Which log lines to build at all.
    package var logLevel: Logger.Level
    /// Which notifications go to which delivery targets (webhooks, push services, e-mail).
    package var deliveries: DeliveryRouting
    /// Whether the devices evaluated are reported (`LaneEffects.observed`): only when
    /// something watches them live (the web console).
    package var observing: Bool
    /// Makes the tokens of previews: unguessable.
    package var makeToken: @Sendable () -> String

    package init(settings: Settings) {
        let topics = Topics(prefix: settings.topicPrefix, shard: settings.shard)
        evaluator = Evaluator(rules: settings.rules, acceptance: settings.acceptance)
        decoder = LocationDecoder(maximumPayloadBytes: settings.maximumPayloadBytes)
        messages = OutboundMessages(topics: topics)
        presence = PresenceMessages(topics: topics)
        discovery = HomeAssistantDiscovery.of(settings, topics: topics)
        deviceTopics = Set(settings.deviceTopics)
        keptTopics = DeviceTopic.bits(of: deviceTopics)
        ownTracks = settings.ownTracksTransitions ? OwnTracksTransition(topics: OwnTracksTopics(filter: settings.ownTracksTopic)) : nil
        strictDevices = settings.strictDevices
        commandsEnabled = settings.commandsEnabled
        commandDevices = settings.commandDevices
        responseTopicPrefix = settings.responseTopicPrefix ?? "\(settings.topicPrefix)/reply/"
        maximumPayloadBytes = settings.maximumPayloadBytes
        maximumPacketBytes = settings.maximumPacketBytes
        limits = settings.limits
        previewTimeout = settings.previewTimeout
        previewsPerDevice = settings.maximumPreviewsPerDevice
        previewsPerLane = max(1, settings.maximumPreviews / max(1, settings.lanes))
        fenceWriteBudget = settings.fenceWriteBudget
        trackerInterval = settings.homeAssistantEnabled ? settings.trackerInterval : nil
        trackerDistance = settings.trackerDistance
        announceLimit = settings.limits.maximumFencesPerDevice
        evictionAge = settings.deviceEvictionAge
        logLevel = settings.logLevel
        deliveries = DeliveryRouting(targets: settings.notify.targets)
        observing = settings.http != nil
        makeToken = {
            var random = SystemRandomNumberGenerator()
            return String(random.next(), radix: 16) + String(random.next(), radix: 16)
        }
    }
}
