import Foundation
import GeotifyConsole
import GeotifyCore
import GeotifyDelivery
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore

/// How a bridge runs: where the broker, the fence file and the state are, which topics
/// carry positions, and the limits. Read from the settings file (`config/geotify.json`)
/// and overridden by command-line flags, both through the table of keys
/// (`Settings.keys`, in `Settings+Keys.swift`); the initial values here are the defaults.
///
/// Relative paths in a settings file are relative to the file's own directory, so the
/// example configuration works from any working directory.
package struct Settings: Sendable, Equatable {
    package var broker = BrokerAddress(host: "127.0.0.1", port: 1883, tls: false)
    /// The MQTT client id; fixed, so the broker keeps the session while the bridge is down.
    package var clientID = "geotify"
    package var fencesPath = "config/fences.json"
    package var stateDirectory = "state"
    /// The subscription filter for OwnTracks positions.
    package var ownTracksTopic = "owntracks/+/+"
    /// The subscription filter for plain JSON positions.
    package var locationTopic = "geotify/location/#"
    /// The first level of every topic the bridge publishes and of its command topics.
    package var topicPrefix = "geotify"
    package var limits = FenceLimits()
    package var maximumPayloadBytes = 65_536
    /// The largest MQTT packet the broker takes (mosquitto's `max_packet_size`): a message
    /// that would be larger is never published (`Publisher`), as the broker would close
    /// the connection for it. The default is `config/mosquitto.conf`'s.
    package var maximumPacketBytes = 262_144
    /// The largest packet MQTT can carry (a remaining length of 268 435 455 bytes).
    package static let largestPacketBytes = 268_435_460
    /// The largest packet the bridge takes from the broker (`MQTTOptions.maximumIncomingPacketBytes`:
    /// an MQTT 5 broker is told it and drops a larger message for the bridge; over MQTT
    /// 3.1.1 a larger one is read without its payload and refused, over TLS too): room
    /// for a payload of `maximumPayloadBytes` with 256 KiB more for its topic and, for a
    /// command, its response topic and correlation data (64 KiB each at most) and the
    /// headers, so that a message a little past the payload limit still comes and is
    /// refused with a reply (`payload_too_large`); and at least `maximumPacketBytes`, the
    /// bridge's own messages, which the retained sweep reads back. 327 680 bytes by
    /// default; at most the largest packet MQTT carries, whatever the settings say.
    package var largestIncomingPacketBytes: Int {
        let payload = min(maximumPayloadBytes, Settings.largestPacketBytes)
        return min(Settings.largestPacketBytes, max(maximumPacketBytes, payload + 256 << 10))
    }
    /// Topics with more levels are refused.
    package var maximumTopicDepth = 16
    /// The most devices the bridge keeps state for; positions of further devices are refused.
    package var maximumDevices = 100_000
    /// The most outbound messages kept in memory waiting for the broker; past that,
    /// persisted ones wait only in the outbox and are read back in order (`Publisher`).
    package var maximumWaitingMessages = Publisher.defaultWaitingLimit
    /// Larger fence files are refused.
    package var maximumFenceFileBytes = 256 << 20
    /// Refuse positions of devices that have no fences, as errors.
    package var strictDevices = false
    package var logLevel = Logger.Level.info
    /// How many serial evaluation lanes devices are spread over: the processors, at
    /// most `maximumLanes`.
    package var lanes = min(Settings.maximumLanes, max(1, ProcessInfo.processInfo.activeProcessorCount))
    /// The most lanes: each lane is a serial queue with its own device table, batches and
    /// timers, and evaluates on one processor at a time, so lanes past the processors
    /// only cost memory (about 3.5 KB each before any device: 100 000 took 350 MB, 10
    /// million failed to allocate). 256 is past the processors of any machine a bridge
    /// runs on, and costs about 1 MB.
    package static let maximumLanes = 256
    package var durability = StateStore.Durability.normal
    /// The MQTT keep-alive in seconds.
    package var keepAlive = 30
    /// Credentials, TLS files and the MQTT version for the broker (`BrokerSecurity`).
    package var security = BrokerSecurity()
    /// The transition rules every fence follows unless it overrides them.
    package var rules = TransitionRules()
    /// Which fixes are evaluated at all (age, order, clock skew).
    package var acceptance = FixAcceptance()
    /// Whether fences may be managed over MQTT (`geotify/cmd/<device>`).
    package var commandsEnabled = true
    /// The devices commands may manage: ids, prefixes ending in `/#`, or `#` for all;
    /// nil means the devices in the fence file.
    package var commandDevices: [String]?
    /// Seconds a preview's token stays valid.
    package var previewTimeout: Double = 300
    /// Whether to publish Home Assistant MQTT discovery configs.
    package var homeAssistantEnabled = true
    /// The Home Assistant discovery prefix.
    package var homeAssistantPrefix = "homeassistant"
    /// The page Home Assistant links each device to (`configuration_url`); nil leaves
    /// it to `homeAssistantDeviceURL`.
    package var homeAssistantConfigurationURL: String?
    /// The devices' `configuration_url`: `homeAssistantConfigurationURL` when set, else
    /// the web console's address when it listens on a specific one
    /// (`ConsoleSettings.linkAddress`), else none.
    package var homeAssistantDeviceURL: String? { homeAssistantConfigurationURL ?? http?.linkAddress }
    /// Where Home Assistant says help for Geotify is (`origin.support_url`).
    package var homeAssistantSupportURL: String?
    /// The OwnTracks secrets file (`user/device secret` lines) for encrypted payloads.
    package var ownTracksKeysFile: String?
    /// The retained topics kept for each device; all four by default.
    package var deviceTopics: [DeviceTopic] = DeviceTopic.allCases
    /// Whether notifications of OwnTracks devices are also published as OwnTracks
    /// `transition` messages on `owntracks/<user>/<device>/event`.
    package var ownTracksTransitions = true
    /// Whether a device's fences are pushed to its OwnTracks app as `setWaypoints` when
    /// they change.
    package var ownTracksWaypoints = false
    /// Seconds between `geotify/stats` reports; 0 turns them off.
    package var statsInterval: Double = 10
    /// The most devices one owner (the first level of a device id, the OwnTracks user)
    /// may have state for without being in the fence file.
    package var maximumDevicesPerOwner = 1_000
    /// Seconds after which a device without fences that sends nothing may be forgotten
    /// to make room for new ones when `maximumDevices` is reached.
    package var deviceEvictionAge: Double = 3_600
    /// The most previews waiting for one device; past it the oldest goes.
    package var maximumPreviewsPerDevice = 10
    /// The most previews waiting in all; past it the oldest goes.
    package var maximumPreviews = 1_000
    /// The seconds a minute one device's fence changes (add, edit, a confirmed delete,
    /// commit) may keep the bridge writing the fence file (`FenceWriteBudget`).
    package var fenceWriteBudget: Double = 2
    /// Where MQTT v5 response topics must lie: this, the device, and optionally more
    /// levels; nil means `<topicPrefix>/reply/`.
    package var responseTopicPrefix: String?
    /// With Home Assistant on, the tracker's position follows fixes at most once per this
    /// many seconds of fix time...
    package var trackerInterval: Double = 60
    /// ...and only once the device moved at least this many metres.
    package var trackerDistance: Double = 50
    /// Where notifications are delivered besides MQTT: webhooks, push services, e-mail.
    package var notify = DeliverySettings()
    /// The web console (map, JSON API, OwnTracks HTTP mode, `/healthz`, `/metrics`); nil:
    /// no HTTP server.
    package var http: ConsoleSettings?
    /// Set the state files aside at start and begin with empty state (`run --reset-state`,
    /// never from a settings file).
    package var resetState = false
    /// Which devices this instance owns when several share them (`"2/3"`, or
    /// `"ordinal/3"` for a StatefulSet pod's ordinal); nil runs one instance for all.
    /// The `GEOTIFY_SHARD` environment variable overrides the file.
    package var shard: ShardAssignment?

    package init() {}

    /// Reads a settings file: every key is optional (`Settings.keys` lists them);
    /// unknown keys and wrong values are errors that name the file and the key.
    /// `environment` supplies `GEOTIFY_SHARD`, which overrides the file's `shard`, and the
    /// pod name (`ShardAssignment.podName(in:)`) an `ordinal/<count>` shard is read from.
    package static func load(
        path: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SettingsError) -> Settings {
        let bytes: [UInt8]
        do {
            guard let read = try AtomicFile.read(path, within: .settings) else {
                throw SettingsError("\(path): no such file")
            }
            bytes = read
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError("\(path): \(error)")
        }
        let json: JSON
        do {
            json = try JSONParser().parse(bytes)
        } catch {
            throw SettingsError("\(path):\(error.line): not valid JSON: \(error.reason) (column \(error.column))")
        }
        guard case .object(let object) = json else {
            throw SettingsError("\(path): the settings must be a JSON object, not \(json.kindDescription)")
        }
        var settings = Settings()
        let source = SettingsSource(origin: .file(path), environment: environment)
        try SettingsReader(keys: keys, source: source).read(object, into: &settings)
        if let text = environment["GEOTIFY_SHARD"] {
            do throws(ShardAssignment.Invalid) {
                settings.shard = try ShardAssignment(parsing: text, podName: ShardAssignment.podName(in: environment))
            } catch {
                throw SettingsError("GEOTIFY_SHARD: \(error.message)")
            }
        }
        try settings.validate(file: path)
        return settings
    }

    /// Sets the key whose command-line flag is `--flag` from `value`, checked as in a
    /// settings file but with paths relative to the working directory.
    package mutating func set(flag: String, to value: String) throws(SettingsError) {
        guard let key = Settings.key(flag: flag) else {
            throw SettingsError("--\(flag) is not a setting")
        }
        try key.read(flagValue: value, into: &self)
    }

    /// Checks the combination of values; `file` names where they came from in the error.
    package func validate(file: String = "settings") throws(SettingsError) {
        guard limits.minimumRadius <= limits.maximumRadius else {
            throw SettingsError("\(file): minimumRadius \(JSONWriter.text(of: limits.minimumRadius)) is larger than maximumRadius \(JSONWriter.text(of: limits.maximumRadius))")
        }
        for (key, filter) in [("owntracksTopic", ownTracksTopic), ("locationTopic", locationTopic)] {
            do {
                _ = try TopicFilter(filter)
            } catch {
                throw SettingsError("\(file): \"\(key)\": \(error.message)")
            }
        }
        if topicPrefix.isEmpty || topicPrefix.contains(where: { $0 == "+" || $0 == "#" }) {
            throw SettingsError("\(file): \"topicPrefix\" must be non-empty and hold no '+' or '#'")
        }
        if homeAssistantPrefix.isEmpty || homeAssistantPrefix.contains(where: { $0 == "+" || $0 == "#" }) {
            throw SettingsError("\(file): the Home Assistant \"prefix\" must be non-empty and hold no '+' or '#'")
        }
        if let conflict = SubscribedTopics(settings: self).conflict(with: PublishedTopics(settings: self)) {
            throw SettingsError("\(file): \(conflict)")
        }
        if homeAssistantEnabled, let missing = DeviceTopic.readByHomeAssistant.first(where: { !deviceTopics.contains($0) }) {
            throw SettingsError("\(file): \"deviceTopics\" leaves out \"\(missing.rawValue)\", which Home Assistant's entities read: add it, or set \"homeassistant\": {\"enabled\": false}")
        }
        if clientID.isEmpty {
            throw SettingsError("\(file): \"clientId\" must not be empty: the broker keeps the bridge's session under it")
        }
        try security.validate(file: file)
    }
}
