import Foundation
import GeotifyCore
import GeotifyDelivery
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore

/// How a bridge runs: where the broker, the fence file and the state are, which topics
/// carry positions, and the limits. Read from the settings file (`config/geotify.json`)
/// and overridden by command-line flags.
///
/// Relative paths in a settings file are relative to the file's own directory, so the
/// example configuration works from any working directory.
public struct Settings: Sendable, Equatable {
    public var broker = BrokerAddress(host: "127.0.0.1", port: 1883, tls: false)
    /// The MQTT client id; fixed, so the broker keeps the session while the bridge is down.
    public var clientID = "geotify"
    public var fencesPath = "config/fences.json"
    public var stateDirectory = "state"
    /// The subscription filter for OwnTracks positions.
    public var ownTracksTopic = "owntracks/+/+"
    /// The subscription filter for plain JSON positions.
    public var locationTopic = "geotify/location/#"
    /// The first level of every topic the bridge publishes and of its command topics.
    public var topicPrefix = "geotify"
    public var limits = FenceLimits()
    public var maximumPayloadBytes = 65_536
    /// Topics with more levels are refused.
    public var maximumTopicDepth = 16
    /// The most devices the bridge keeps state for; positions of further devices are refused.
    public var maximumDevices = 100_000
    /// Larger fence files are refused.
    public var maximumFenceFileBytes = 256 << 20
    /// Refuse positions of devices that have no fences, as errors.
    public var strictDevices = false
    public var logLevel = Logger.Level.info
    /// How many serial evaluation lanes devices are spread over.
    public var lanes = max(1, ProcessInfo.processInfo.activeProcessorCount)
    public var durability = StateStore.Durability.normal
    /// The MQTT keep-alive in seconds.
    public var keepAlive = 30
    /// Credentials, TLS files and the MQTT version for the broker (`BrokerSecurity`).
    public var security = BrokerSecurity()
    /// The transition rules every fence follows unless it overrides them.
    public var rules = TransitionRules()
    /// Which fixes are evaluated at all (age, order, clock skew).
    public var acceptance = FixAcceptance()
    /// Whether fences may be managed over MQTT (`geotify/cmd/<device>`).
    public var commandsEnabled = true
    /// The devices commands may manage: ids, prefixes ending in `/#`, or `#` for all;
    /// nil means the devices in the fence file.
    public var commandDevices: [String]?
    /// Seconds a preview's token stays valid.
    public var previewTimeout: Double = 300
    /// Whether to publish Home Assistant MQTT discovery configs.
    public var homeAssistantEnabled = true
    /// The Home Assistant discovery prefix.
    public var homeAssistantPrefix = "homeassistant"
    /// Whether notifications of OwnTracks devices are also published as OwnTracks
    /// `transition` messages on `owntracks/<user>/<device>/event`.
    public var ownTracksTransitions = true
    /// Whether a device's fences are pushed to its OwnTracks app as `setWaypoints` when
    /// they change.
    public var ownTracksWaypoints = false
    /// Seconds between `geotify/stats` reports; 0 turns them off.
    public var statsInterval: Double = 10
    /// The most devices one owner (the first level of a device id, the OwnTracks user)
    /// may have state for without being in the fence file.
    public var maximumDevicesPerOwner = 1_000
    /// Seconds after which a device without fences that sends nothing may be forgotten
    /// to make room for new ones when `maximumDevices` is reached.
    public var deviceEvictionAge: Double = 3_600
    /// The most previews waiting for one device; past it the oldest goes.
    public var maximumPreviewsPerDevice = 10
    /// The most previews waiting in all; past it the oldest goes.
    public var maximumPreviews = 1_000
    /// Where MQTT v5 response topics must lie: this, the device, and optionally more
    /// levels; nil means `<topicPrefix>/reply/`.
    public var responseTopicPrefix: String?
    /// With Home Assistant on, the tracker's position follows fixes at most once per this
    /// many seconds of fix time...
    public var trackerInterval: Double = 60
    /// ...and only once the device moved at least this many metres.
    public var trackerDistance: Double = 50
    /// Where notifications are delivered besides MQTT: webhooks, push services, e-mail.
    package var notify = DeliverySettings()
    /// Which devices this instance owns when several share them (`"2/3"`, or
    /// `"ordinal/3"` for a StatefulSet pod's ordinal); nil runs one instance for all.
    /// The `GEOTIFY_SHARD` environment variable overrides the file.
    public var shard: ShardAssignment?

    public init() {}

    /// The keys a settings file may hold.
    public static let keys = [
        "broker", "clientId", "fences", "stateDir", "owntracksTopic", "locationTopic", "topicPrefix",
        "minimumRadius", "maximumRadius", "maximumFencesPerDevice", "maximumPayloadBytes", "strictDevices",
        "logLevel", "lanes", "durability", "keepAlive",
        "username", "password", "passwordFile", "tls", "protocol",
        "maximumAccuracy", "accuracyAware", "hysteresis", "minimumDuration", "dwell", "initialTrigger",
        "maximumAge", "maximumFutureSkew", "commands", "commandDevices", "previewTimeout",
        "homeassistant", "owntracksTransitions", "owntracksWaypoints", "statsInterval",
        "maximumTopicDepth", "maximumDevices", "maximumFenceFileBytes", "notify", "shard",
    ]

    /// Reads a settings file: every key is optional; unknown keys and wrong values are
    /// errors that name the file and the key. `environment` supplies `GEOTIFY_SHARD`
    /// and the pod name (`POD_NAME`, else `HOSTNAME`) for the shard.
    public static func load(
        path: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(SettingsError) -> Settings {
        let bytes: [UInt8]
        do {
            guard let read = try AtomicFile.read(path) else { throw SettingsError("\(path): no such file") }
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
        let base = (path as NSString).deletingLastPathComponent
        var settings = Settings()
        let reader = SettingsReader(object: object, file: path)
        for key in object.keys where !keys.contains(key) {
            throw SettingsError("\(path): unknown key \"\(key)\" (known keys: \(keys.joined(separator: ", ")))")
        }
        if let url = try reader.string("broker") {
            do {
                settings.broker = try BrokerAddress(parsing: url)
            } catch {
                throw SettingsError("\(path): \"broker\": \(error.message)")
            }
        }
        if let value = try reader.string("clientId") { settings.clientID = value }
        if let value = try reader.string("fences") { settings.fencesPath = SettingsReader.resolve(value, against: base) }
        if let value = try reader.string("stateDir") { settings.stateDirectory = SettingsReader.resolve(value, against: base) }
        if let value = try reader.string("owntracksTopic") { settings.ownTracksTopic = value }
        if let value = try reader.string("locationTopic") { settings.locationTopic = value }
        if let value = try reader.string("topicPrefix") { settings.topicPrefix = value }
        if let value = try reader.number("minimumRadius", atLeast: 0) { settings.limits.minimumRadius = value }
        if let value = try reader.number("maximumRadius", atLeast: 0) { settings.limits.maximumRadius = value }
        if let value = try reader.integer("maximumFencesPerDevice", atLeast: 1) { settings.limits.maximumFencesPerDevice = value }
        if let value = try reader.integer("maximumPayloadBytes", atLeast: 1) { settings.maximumPayloadBytes = value }
        if let value = try reader.integer("maximumTopicDepth", atLeast: 2) { settings.maximumTopicDepth = value }
        if let value = try reader.integer("maximumDevices", atLeast: 1) { settings.maximumDevices = value }
        if let value = try reader.integer("maximumFenceFileBytes", atLeast: 1) { settings.maximumFenceFileBytes = value }
        if let value = try reader.bool("strictDevices") { settings.strictDevices = value }
        if let value = try reader.string("logLevel") {
            guard let level = Logger.Level(name: value) else {
                throw SettingsError("\(path): \"logLevel\" must be one of debug, info, warning, error, not \"\(value)\"")
            }
            settings.logLevel = level
        }
        if let value = try reader.integer("lanes", atLeast: 1) { settings.lanes = value }
        if let value = try reader.string("durability") {
            guard let durability = StateStore.Durability(rawValue: value) else {
                throw SettingsError("\(path): \"durability\" must be normal or full, not \"\(value)\"")
            }
            settings.durability = durability
        }
        if let value = try reader.integer("keepAlive", atLeast: 5) { settings.keepAlive = value }
        settings.security = try BrokerSecurity(settings: object, file: path, base: base)
        if let value = try reader.number("maximumAccuracy", atLeast: 0) { settings.rules.maximumAccuracy = value }
        if let value = try reader.bool("accuracyAware") { settings.rules.accuracyAware = value }
        if let value = try reader.number("hysteresis", atLeast: 0) { settings.rules.hysteresis = value }
        if let value = try reader.number("minimumDuration", atLeast: 0) { settings.rules.minimumDuration = value }
        if let value = try reader.number("dwell", atLeast: 0) {
            guard value > 0 else { throw SettingsError("\(path): \"dwell\" must be more than 0 seconds (leave it out for no dwell)") }
            settings.rules.dwell = value
        }
        if let value = try reader.string("initialTrigger") {
            guard let trigger = InitialTrigger(rawValue: value) else {
                throw SettingsError("\(path): \"initialTrigger\" must be none, enter or exit, not \"\(value)\"")
            }
            settings.rules.initialTrigger = trigger
        }
        if let value = try reader.number("maximumAge", atLeast: 0) { settings.acceptance.maximumAge = value }
        if let value = try reader.number("maximumFutureSkew", atLeast: 0) { settings.acceptance.maximumFutureSkew = value }
        if let value = try reader.bool("commands") { settings.commandsEnabled = value }
        if let value = object["commandDevices"] {
            guard let list = value.arrayValue, let devices = Optional(list.compactMap(\.stringValue)), devices.count == list.count else {
                throw SettingsError("\(path): \"commandDevices\" must be an array of device identifiers or prefixes ending in /#")
            }
            settings.commandDevices = devices
        }
        if let value = try reader.number("previewTimeout", atLeast: 1) { settings.previewTimeout = value }
        if let value = object["homeassistant"] {
            guard case .object(let homeAssistant) = value else {
                throw SettingsError("\(path): \"homeassistant\" must be an object like {\"enabled\": true, \"prefix\": \"homeassistant\"}")
            }
            let nested = SettingsReader(object: homeAssistant, file: path, prefix: "homeassistant.")
            for key in homeAssistant.keys where key != "enabled" && key != "prefix" {
                throw SettingsError("\(path): \"homeassistant\" has an unknown key \"\(key)\" (known keys: enabled, prefix)")
            }
            if let enabled = try nested.bool("enabled") { settings.homeAssistantEnabled = enabled }
            if let prefix = try nested.string("prefix") { settings.homeAssistantPrefix = prefix }
        }
        if let value = try reader.bool("owntracksTransitions") { settings.ownTracksTransitions = value }
        if let value = try reader.bool("owntracksWaypoints") { settings.ownTracksWaypoints = value }
        if let value = try reader.number("statsInterval", atLeast: 0) { settings.statsInterval = value }
        if let value = object["notify"] {
            do {
                settings.notify = try DeliverySettings(parsing: value, file: path)
            } catch {
                throw SettingsError(error.message)
            }
        }
        let fileShard = try reader.string("shard")
        if let value = environment["GEOTIFY_SHARD"] ?? fileShard {
            let source = environment["GEOTIFY_SHARD"] == nil ? "\"shard\"" : "GEOTIFY_SHARD"
            do {
                settings.shard = try ShardAssignment(parsing: value, podName: environment["POD_NAME"] ?? environment["HOSTNAME"])
            } catch {
                throw SettingsError("\(path): \(source): \(error.message)")
            }
        }
        try settings.validate(file: path)
        return settings
    }

    /// Checks the combination of values; `file` names where they came from in the error.
    public func validate(file: String = "settings") throws(SettingsError) {
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
        if clientID.isEmpty {
            throw SettingsError("\(file): \"clientId\" must not be empty: the broker keeps the bridge's session under it")
        }
    }
}
