import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Builds Home Assistant MQTT discovery messages, so that every device of the fence file
/// appears in Home Assistant with its entities and no YAML: a device tracker, a presence
/// binary sensor per fence, a badge sensor, a button that resets the badge, and an event
/// entity that fires on each notification.
///
/// Discovery topics follow `<prefix>/<component>/<node_id>/<object_id>/config`
/// (https://www.home-assistant.io/integrations/mqtt/#discovery-messages); the payloads
/// are retained QoS 1 JSON objects, and an empty retained payload removes the entity.
/// Home Assistant publishes `online` on `<prefix>/status` (`birthTopic`) when it starts:
/// the bridge then announces everything again (`configs(devices:)`).
///
/// The entities of a device, and the topics they read and write:
///
/// | component | object id | reads / writes |
/// |---|---|---|
/// | `device_tracker` | `tracker` | state `geotify/tracker/<device>` (fence or `not_home`), attributes `geotify/state/<device>` |
/// | `binary_sensor` | `presence_<fence>` | `geotify/presence/<device>/<fence>`: `inside` on, `outside` off |
/// | `sensor` | `badge` | `geotify/badge/<device>` |
/// | `button` | `reset_badge` | publishes `{"action":"resetBadge"}` to `geotify/cmd/<device>` |
/// | `event` | `event` | `geotify/event/<device>`: the notifications, typed by their `event_type` key |
///
/// Every entity is available while `geotify/status` says `online`, has a `unique_id`
/// of `<node_id>_<object_id>`, and belongs to one Home Assistant device per Geotify
/// device, identified by its node id.
///
/// The keys of each platform are those of https://www.home-assistant.io/integrations/
/// `device_tracker.mqtt/`, `binary_sensor.mqtt/`, `sensor.mqtt/`, `button.mqtt/` and
/// `event.mqtt/` (whose `state_topic` payload must carry `event_type`).
public struct HomeAssistantDiscovery: Sendable {
    /// The discovery prefix Home Assistant listens on (`homeassistant` by default).
    public let prefix: String
    public let topics: Topics
    private let presence: PresenceMessages

    /// The event types of the event entity: the `event_type` a notification carries is
    /// its transition kind. Home Assistant ignores events whose type is not listed.
    public static let eventTypes = ["enter", "exit", "dwell"]

    public init(prefix: String = "homeassistant", topics: Topics) {
        self.prefix = prefix
        self.topics = topics
        presence = PresenceMessages(topics: topics)
    }

    /// Where Home Assistant announces itself: `online` there means it (re)started and
    /// has forgotten non-retained state, so the bridge re-announces its entities.
    /// (https://www.home-assistant.io/integrations/mqtt/#birth-and-last-will-messages)
    public var birthTopic: String { "\(prefix)/status" }

    /// The node id of `device`: `objectID(of: "<topic prefix>/<device>")`, so bridges with
    /// different topic prefixes never share entities. `alice/phone` under `geotify`
    /// becomes `geotify_alice_phone_` followed by eight hex digits.
    public func nodeID(of device: String) -> String {
        HomeAssistantDiscovery.objectID(of: "\(topics.prefix)/\(device)")
    }

    /// A discovery id for `text` made only of the characters Home Assistant allows,
    /// `[a-zA-Z0-9_-]`: every other character becomes `_`. When that changed anything,
    /// or when `text` itself ends like such an id (`_` and eight hex digits), `_` and
    /// eight hex digits of a stable hash of `text` are appended, so two different texts
    /// cannot get the same id unless their hashes collide (`alice/phone` and
    /// `alice_phone` differ).
    public static func objectID(of text: String) -> String {
        let sanitised = String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            isAllowed(scalar) ? scalar : "_"
        }))
        guard sanitised != text || looksHashed(text) || text.isEmpty else { return text }
        return "\(sanitised)_\(StableHash.shortHex(text))"
    }

    /// The retained discovery configs of all entities of `device` with `fences` (its
    /// fences, in the order of the fence file): tracker, badge sensor, reset button,
    /// event, then one presence binary sensor per fence.
    public func configs(device: String, fences: [Fence]) -> [OutboxMessage] {
        let node = nodeID(of: device)
        let base = Base(node: node, device: device, availability: availability)
        var messages = [
            message("device_tracker", node, "tracker", base.entity("tracker", name: "Location", [
                "state_topic": .string(presence.trackerTopic(device)),
                "json_attributes_topic": .string(presence.stateTopic(device)),
                "source_type": "gps",
                "payload_home": "home",
                "payload_not_home": .string(PresenceMessages.notHome),
            ])),
            message("sensor", node, "badge", base.entity("badge", name: "Badge", [
                "state_topic": .string(topics.badge(device)),
                "state_class": "measurement",
                "icon": "mdi:bell-badge",
            ])),
            message("button", node, "reset_badge", base.entity("reset_badge", name: "Reset badge", [
                "command_topic": .string("\(topics.prefix)/cmd/\(device)"),
                "payload_press": #"{"action":"resetBadge"}"#,
                "retain": false,
            ])),
            message("event", node, "event", base.entity("event", name: "Fence event", [
                "state_topic": .string(topics.event(device)),
                "event_types": .array(HomeAssistantDiscovery.eventTypes.map { .string($0) }),
            ])),
        ]
        for fence in fences {
            let object = HomeAssistantDiscovery.presenceObjectID(fence.identifier)
            messages.append(message("binary_sensor", node, object, base.entity(object, name: fence.identifier, [
                "state_topic": .string(presence.presenceTopic(device, fence: fence.identifier)),
                "payload_on": .string(PresenceMessages.inside),
                "payload_off": .string(PresenceMessages.outside),
                "device_class": "presence",
            ])))
        }
        return messages
    }

    /// The configs of every device in `devices` (device → fences, as `FenceBook.devices`),
    /// devices sorted by id: the announcement at start and after Home Assistant's birth
    /// message.
    public func configs(devices: [String: [Fence]]) -> [OutboxMessage] {
        devices.keys.sorted().flatMap { configs(device: $0, fences: devices[$0] ?? []) }
    }

    /// Empty retained configs, which make Home Assistant delete the entities, for what is
    /// in `previous` but not in `current` (both device → fences): every entity of a
    /// removed device, and the presence sensor of each removed fence of a kept device.
    /// Sorted by topic.
    public func removals(previous: [String: [Fence]], current: [String: [Fence]]) -> [OutboxMessage] {
        var topics: [String] = []
        for (device, fences) in previous {
            let node = nodeID(of: device)
            let kept = current[device].map { Set($0.map(\.identifier)) }
            if kept == nil {
                topics += [("device_tracker", "tracker"), ("sensor", "badge"), ("button", "reset_badge"), ("event", "event")]
                    .map { configTopic($0.0, node, $0.1) }
            }
            for fence in fences where kept?.contains(fence.identifier) != true {
                topics.append(configTopic("binary_sensor", node, HomeAssistantDiscovery.presenceObjectID(fence.identifier)))
            }
        }
        return topics.sorted().map { OutboxMessage(topic: $0, payload: [], qos: 1, retain: true) }
    }

    /// `<prefix>/<component>/<node_id>/<object_id>/config`.
    public func configTopic(_ component: String, _ node: String, _ object: String) -> String {
        "\(prefix)/\(component)/\(node)/\(object)/config"
    }

    /// The object id of the presence sensor of `fence`.
    static func presenceObjectID(_ fence: String) -> String {
        "presence_\(objectID(of: fence))"
    }

    /// Available while the bridge's status topic says `online`
    /// (the `availability` list of every MQTT platform, e.g.
    /// https://www.home-assistant.io/integrations/device_tracker.mqtt/).
    private var availability: JSON {
        [["topic": .string(topics.status), "payload_available": "online", "payload_not_available": "offline"]]
    }

    private func message(_ component: String, _ node: String, _ object: String, _ config: JSONObject) -> OutboxMessage {
        OutboxMessage(topic: configTopic(component, node, object), payload: JSONWriter().bytes(.object(config)), qos: 1, retain: true)
    }

    /// What every entity of one device shares: availability, the device block, and the
    /// origin block Home Assistant logs discovered entities with.
    private struct Base {
        let node: String
        let device: String
        let availability: JSON

        /// An entity config: `name`, `unique_id`, the platform's own `keys`, then the
        /// shared `availability`, `qos`, `device` and `origin`.
        func entity(_ object: String, name: String, _ keys: KeyValuePairs<String, JSON>) -> JSONObject {
            var config = JSONObject()
            config["name"] = .string(name)
            config["unique_id"] = .string("\(node)_\(object)")
            for (key, value) in keys { config[key] = value }
            config["availability"] = availability
            config["qos"] = 1
            config["device"] = [
                "identifiers": [.string(node)],
                "name": .string(device),
                "manufacturer": "Geotify",
                "model": "Geotify geofence bridge",
            ]
            config["origin"] = ["name": "Geotify"]
            return config
        }
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "_", "-": true
        default: false
        }
    }

    /// Whether `text` ends in `_` and eight lowercase hex digits, as hashed ids do.
    private static func looksHashed(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        guard scalars.count >= 9, scalars[scalars.count - 9] == "_" else { return false }
        return scalars.suffix(8).allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
    }
}
