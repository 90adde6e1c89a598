import GeotifyConsole
import GeotifyHTTP
import GeotifyCore
import GeotifyDelivery
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore

/// The table of every settings key: what the settings file may hold, what each key
/// does and its default, and which keys are command-line flags too. To add a setting,
/// add its field to `Settings` (its initial value is the default) and a row here; the
/// loader, the flags, `geotify help settings` and the suggestions for misspelt keys
/// follow from the row.
extension Settings {
    package static let keys: [SettingsKey] = connection + files + topics + limits
        + TransitionRule.allCases.map(SettingsKey.rule) + acceptanceKeys + admission + commandKeys + integrations

    /// The key named `name` (nested keys joined with dots), if there is one.
    package static func key(named name: String) -> SettingsKey? {
        keys.first { $0.name == name }
    }

    /// The key whose command-line flag is `--flag`, if there is one.
    package static func key(flag: String) -> SettingsKey? {
        keys.first { $0.flag?.name == flag }
    }

    private static let connection: [SettingsKey] = [
        SettingsKey.make(
            "broker", .brokerURL, \.broker, flag: SettingsKey.Flag(name: "broker", placeholder: "URL"),
            help: "The MQTT broker: mqtt://HOST:PORT, or mqtts://HOST:PORT for TLS (port 1883 or 8883 when left out).",
            check: { value, source throws(SettingsError) in
                let url = try SettingsKey.field(source) { () throws(FenceIssue) in try JSONField.string(value, key: "broker") }
                do throws(MQTTError) {
                    return try BrokerAddress(parsing: url)
                } catch {
                    throw source.error(key: "broker", error.message)
                }
            },
            describe: { .string($0.description) }),
        .text("clientId", \.clientID, help: "The MQTT client id. Fixed, so the broker keeps the bridge's session (and the positions queued in it) while the bridge is down."),
        .wholeNumber("keepAlive", \.keepAlive, atLeast: 5, unit: "s", help: "The MQTT keep-alive: how often the connection is checked when idle."),
        .choice("protocol", \.security.protocolVersion, [("3.1.1", .v311), ("5", .v5)], help: "The MQTT version spoken."),
        .optionalText("username", \.security.username, help: "The user name the bridge logs in with."),
        .optionalText("password", \.security.password, help: "The password, written in the settings file (discouraged: prefer passwordFile or the environment variable GEOTIFY_MQTT_PASSWORD)."),
        .optionalPath("passwordFile", \.security.passwordFile, help: "A file holding the password (one trailing line break is ignored), e.g. a systemd credential."),
        .object("tls", help: "TLS for an mqtts:// broker: the CA, a client certificate. The system's CAs and every check by default.",
                present: { settings in settings.security.tls = settings.security.tls ?? MQTTTLS() }),
        tlsPath("tls.caFile", \.caFile, help: "A PEM file of the CA certificates that may sign the broker's certificate."),
        tlsPath("tls.caPath", \.caPath, help: "A directory of hashed PEM CA certificates (openssl rehash)."),
        tlsPath("tls.certFile", \.certFile, help: "The client certificate (PEM), with tls.keyFile."),
        tlsPath("tls.keyFile", \.keyFile, help: "The client certificate's unencrypted private key (PEM)."),
        SettingsKey(
            name: "tls.insecure", kind: .bool, unit: nil, help: "Skip every check of the broker's certificate and host name. For testing only.",
            flag: nil, defaultText: nil,
            read: { value, settings, source throws(SettingsError) in
                settings.security.tls?.insecure = try SettingsKey.field(source) { () throws(FenceIssue) in try JSONField.bool(value, key: "tls.insecure") }
            },
            value: { $0.security.tls.map { .bool($0.insecure) } }),
    ]

    /// A file of the `tls` object (whose presence makes `security.tls`).
    private static func tlsPath(_ name: String, _ member: WritableKeyPath<MQTTTLS, String?> & Sendable, help: String) -> SettingsKey {
        SettingsKey(
            name: name, kind: .path, unit: nil, help: help, flag: nil, defaultText: nil,
            read: { value, settings, source throws(SettingsError) in
                settings.security.tls?[keyPath: member] = source.resolve(try SettingsKey.nonEmpty(value, name: name, source: source))
            },
            value: { $0.security.tls?[keyPath: member].map(JSON.string) })
    }

    private static let files: [SettingsKey] = [
        .path("fences", \.fencesPath, flag: SettingsKey.Flag(name: "fences", placeholder: "FILE"), help: "The fence file."),
        .path("stateDir", \.stateDirectory, flag: SettingsKey.Flag(name: "state-dir", placeholder: "DIR"), help: "The directory of the state database (created when missing)."),
        .choice("durability", \.durability, StateStore.Durability.allCases.map { ($0.rawValue, $0) },
                help: "normal: a power loss may lose the last moments of state, never corrupt it; full: every commit is synced to disk, slower."),
        .wholeNumber("maximumFenceFileBytes", \.maximumFenceFileBytes, atLeast: 1, unit: "bytes", help: "Larger fence files are refused."),
    ]

    private static let topics: [SettingsKey] = [
        .text("owntracksTopic", \.ownTracksTopic, help: "The subscription for OwnTracks positions; the device is taken from its wildcard levels."),
        .text("locationTopic", \.locationTopic, help: "The subscription for plain JSON positions."),
        .text("topicPrefix", \.topicPrefix, help: "The first level of every topic the bridge publishes and of its command topics."),
    ]

    private static let limits: [SettingsKey] = [
        .number("minimumRadius", \.limits.minimumRadius, atLeast: 0, unit: "m", help: "Smaller fence radii are raised to this, with a warning."),
        .number("maximumRadius", \.limits.maximumRadius, atLeast: 0, unit: "m", help: "Larger fence radii are lowered to this, with a warning."),
        .wholeNumber("maximumFencesPerDevice", \.limits.maximumFencesPerDevice, atLeast: 1, help: "The most fences one device may have (the iOS app's 20 regions)."),
        .wholeNumber("maximumPayloadBytes", \.maximumPayloadBytes, atLeast: 1, unit: "bytes", help: "Larger position and command payloads are refused. A packet larger than this with 256 KiB more (and than maximumPacketBytes) is not taken: over MQTT 5 the broker is told to drop it, over MQTT 3.1.1 it is read without its payload and refused."),
        .wholeNumber("maximumPacketBytes", \.maximumPacketBytes, atLeast: 1_024, atMost: Settings.largestPacketBytes, unit: "bytes",
                     help: "The largest MQTT packet the broker takes (mosquitto's max_packet_size), which closes the connection of a client that sends a larger one. A larger message is not published but reported (message_too_large); a command's reply that would be is sent without its fences, or refused for a list or get."),
        .wholeNumber("maximumTopicDepth", \.maximumTopicDepth, atLeast: 2, help: "Topics with more levels are refused."),
        .wholeNumber("maximumDevices", \.maximumDevices, atLeast: 1, help: "The most devices the bridge keeps state for; positions of further devices are refused."),
        .wholeNumber("maximumWaitingMessages", \.maximumWaitingMessages, atLeast: 1, help: "The most outbound messages kept in memory while the broker is slow or away; past that, notifications wait only in the outbox on disk and are read back in order (less memory, more disk reads). Replies and error reports may then arrive before notifications that wait there."),
        .bool("strictDevices", \.strictDevices, help: "Refuse positions of devices that have no fences, as errors."),
        .wholeNumber("lanes", \.lanes, atLeast: 1, atMost: Settings.maximumLanes, defaultText: "the number of processors (at most 256)",
                     help: "How many serial evaluation lanes the devices are spread over; more than the processors gains nothing, since each lane runs on one at a time."),
        .choice("logLevel", \.logLevel, Logger.Level.allCases.map { ("\($0)", $0) }, flag: SettingsKey.Flag(name: "log-level", placeholder: "LEVEL"),
                help: "The least important log lines written. Of refused input, 10 refusals of each error code a minute are logged, of notifications 10 a device, of dead letters 10 a target; then one line sums up the rest; at debug, all."),
    ]

    private static let acceptanceKeys: [SettingsKey] = [
        .number("maximumAge", \.acceptance.maximumAge, atLeast: 0, unit: "s", help: "Fixes older than this (by their own time) are dropped; 0 turns the check off."),
        .number("maximumFutureSkew", \.acceptance.maximumFutureSkew, atLeast: 0, unit: "s", help: "How far a fix's time may be ahead of the clock (device clocks drift)."),
    ]

    private static let admission: [SettingsKey] = [
        .wholeNumber("maximumDevicesPerOwner", \.maximumDevicesPerOwner, atLeast: 1,
                     help: "The most devices one owner (the first level of a device id, the OwnTracks user) may have state for without being in the fence file."),
        .number("deviceEvictionAge", \.deviceEvictionAge, atLeast: 0, unit: "s",
                help: "A device without fences that sent nothing for this long may be forgotten to make room for new ones when maximumDevices is reached."),
    ]

    private static let commandKeys: [SettingsKey] = [
        .bool("commands", \.commandsEnabled, help: "Whether fences may be managed over MQTT (<topicPrefix>/cmd/<device>)."),
        SettingsKey.make(
            "commandDevices", .texts, \.commandDevices, defaultText: "the devices in the fence file",
            help: "The devices commands may manage: identifiers, prefixes ending in /#, or # for all.",
            check: { value, source throws(SettingsError) in
                try SettingsKey.field(source) { () throws(FenceIssue) in try JSONField.strings(value, key: "commandDevices") }
            },
            describe: { $0.map { .array($0.map(JSON.string)) } }),
        .number("previewTimeout", \.previewTimeout, atLeast: 1, unit: "s", help: "How long a preview's token stays valid for its commit."),
        .wholeNumber("maximumPreviewsPerDevice", \.maximumPreviewsPerDevice, atLeast: 1, help: "The most previews waiting for one device; past it the oldest goes."),
        .wholeNumber("maximumPreviews", \.maximumPreviews, atLeast: 1, help: "The most previews waiting in all; past it the oldest goes."),
        .number("fenceWriteBudget", \.fenceWriteBudget, atLeast: 0.001, unit: "s a minute",
                help: "How long one device's fence changes (add, edit, a confirmed delete, commit) may keep the bridge writing the fence file, at once and in any minute after that: every other device's positions wait meanwhile. Past it a change is refused as rate_limited. A change of a small file takes milliseconds, one of a single file of 100 000 fences about 0.05 s; in a fence directory a change writes only its device's file."),
        .optionalText("responseTopicPrefix", \.responseTopicPrefix, defaultText: "<topicPrefix>/reply/",
                      help: "Where MQTT v5 response topics of commands must lie: this, the device, and optionally more levels."),
    ]

    private static let integrations: [SettingsKey] = [
        .object("homeassistant", help: "Home Assistant MQTT discovery."),
        .bool("homeassistant.enabled", \.homeAssistantEnabled, help: "Whether to publish Home Assistant discovery configs."),
        .text("homeassistant.prefix", \.homeAssistantPrefix, help: "Home Assistant's discovery prefix."),
        .optionalText("homeassistant.configurationUrl", \.homeAssistantConfigurationURL,
                      help: "The page Home Assistant links each device to (configuration_url); by default the web console's address when http.listen names one (not 0.0.0.0 or ::)."),
        .optionalText("homeassistant.supportUrl", \.homeAssistantSupportURL, help: "Where Home Assistant says help for Geotify is (origin.support_url)."),
        .number("trackerInterval", \.trackerInterval, atLeast: 0, unit: "s",
                help: "With Home Assistant on, the tracker's position follows fixes at most once per this many seconds of fix time..."),
        .number("trackerDistance", \.trackerDistance, atLeast: 0, unit: "m", help: "...and only once the device moved at least this far."),
        SettingsKey.make(
            "deviceTopics", .texts, \.deviceTopics,
            help: "The retained topics kept for each device: state (<topicPrefix>/state/<device>, the state document), presence (one a fence), tracker, badge. The state document says what the others say: with it alone the broker handles three messages a transition instead of six. Home Assistant reads state, presence and badge. A topic left out is cleared (an empty retained message) after each connection.",
            check: { value, source throws(SettingsError) in
                try SettingsKey.field(source) { () throws(FenceIssue) in try DeviceTopic.list(value, key: "deviceTopics") }
            },
            describe: { .array($0.map { .string($0.rawValue) }) }),
        .bool("owntracksTransitions", \.ownTracksTransitions, help: "Also publish notifications of OwnTracks devices as OwnTracks transition messages on owntracks/<user>/<device>/event."),
        .bool("owntracksWaypoints", \.ownTracksWaypoints, help: "Push a device's fences to its OwnTracks app (setWaypoints) when they change."),
        .optionalPath("owntracksKeysFile", \.ownTracksKeysFile,
                      help: "The OwnTracks secrets file (one \"user/device secret\" a line) for encrypted payloads."),
        .number("statsInterval", \.statsInterval, atLeast: 0, unit: "s", help: "Seconds between <topicPrefix>/stats reports; 0 turns them off."),
        SettingsKey(
            name: "shard", kind: .text, unit: nil,
            help: "Which devices this instance owns when several share them: \"2/3\" (instance 2 of 3, from 0), or \"ordinal/3\" for a Kubernetes StatefulSet pod's ordinal (from POD_NAME or HOSTNAME); the GEOTIFY_SHARD environment variable overrides it (docs/scaling.md).",
            flag: nil, defaultText: "one instance for all devices",
            read: { value, settings, source throws(SettingsError) in
                guard let text = value.stringValue else {
                    throw source.error(FenceIssue(.wrongType, "\"shard\" must be a string like \"2/3\", not \(value.kindDescription)"))
                }
                do throws(ShardAssignment.Invalid) {
                    settings.shard = try ShardAssignment(
                        parsing: text, podName: ShardAssignment.podName(in: source.environment))
                } catch {
                    throw source.error(key: "shard", error.message)
                }
            },
            value: { settings in settings.shard.map { .string($0.description) } }),
        SettingsKey(
            name: "notify", kind: .section("{\"targets\": [...]}, see docs/notifications.md"), unit: nil,
            help: "Where notifications are delivered besides MQTT (webhook, ntfy, gotify, pushover, telegram, email), each target with its filter; every secret is read when the settings load.",
            flag: nil, defaultText: "no targets",
            read: { value, settings, source throws(SettingsError) in
                guard case .file(let path) = source.origin else { return }
                do throws(DeliverySettingsError) {
                    settings.notify = try DeliverySettings(parsing: value, file: path)
                } catch {
                    throw SettingsError(error.message)
                }
            },
            value: { _ in nil }),
        SettingsKey(
            name: "http", kind: .section("{\"listen\": \"127.0.0.1:8091\", ...}, see docs/http.md"), unit: nil,
            help: "The web console: the map, the JSON API, OwnTracks HTTP mode, /healthz and /metrics. Without it, no HTTP server.",
            flag: nil, defaultText: "no HTTP server",
            read: { value, settings, source throws(SettingsError) in
                guard case .file(let path) = source.origin else { return }
                guard case .object(let object) = value else {
                    throw source.error(FenceIssue(.wrongType, "\"http\" must be an object like {\"listen\": \"127.0.0.1:8091\"}, not \(value.kindDescription)"))
                }
                do throws(HTTPSettingsError) {
                    settings.http = try ConsoleSettings(parsing: object, file: path)
                } catch {
                    throw SettingsError(error.message)
                }
            },
            value: { _ in nil }),
    ]
}
