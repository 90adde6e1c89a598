import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Builds Home Assistant MQTT discovery messages, so that the bridge, every device of the
/// fence file and every shared fence appear in Home Assistant with their entities and
/// no YAML.
///
/// Discovery topics follow `<prefix>/<component>/<node_id>/<object_id>/config`
/// (https://www.home-assistant.io/integrations/mqtt/#discovery-messages); the payloads
/// are retained QoS 1 JSON objects, and an empty retained payload removes the entity.
/// Home Assistant publishes `online` on `<prefix>/status` (`birthTopic`) when it starts:
/// the bridge then announces everything again (`announcement`).
///
/// Three kinds of Home Assistant device, and the entities of each:
///
/// | device | component | object id | name | reads / writes |
/// |---|---|---|---|---|
/// | Geotify device | `device_tracker` | `tracker` | (the device's) | state and attributes `geotify/state/<device>` (`trackerTemplate`) |
/// | | `binary_sensor` | `presence_<fence>` | the fence's display name | `geotify/presence/<device>/<fence>`: `inside` on, `outside` off |
/// | | `sensor` | `badge` | Badge | `geotify/badge/<device>` |
/// | | `button` | `reset_badge` | Reset badge (config) | publishes `{"action":"resetBadge"}` to `geotify/cmd/<device>` |
/// | | `event` | `event` | Fence event | `geotify/event/<device>`, typed by its `event_type` key |
/// | the bridge | `binary_sensor` | `connectivity` | Connectivity (diagnostic) | `geotify/status`: `online` on, `offline` off |
/// | | `sensor` | `uptime`, `devices`, `fences`, `notifications`, `refused`, `latency_p99` | (diagnostic) | `geotify/stats` |
/// | a shared set | `sensor` | `occupancy_<fence>` | "<fence> occupancy" | `geotify/occupancy/<owner>/<fence>`: how many devices are inside |
/// | | `binary_sensor` | `occupied_<fence>` | the fence's display name | the same topic: on while the count is above 0 |
///
/// Every entity but the bridge's connectivity is available while `geotify/status` says
/// `online`; the connectivity sensor reads that topic itself, so it is `off`, not
/// unavailable, when the bridge is gone. Every entity has a `unique_id` of
/// `<node_id>_<object_id>`; every device carries `sw_version` and, when the web
/// interface's address is set, `configuration_url`; the devices of tracked devices and
/// shared sets are `via_device` the bridge. `origin` names Geotify, its version and,
/// when set, its support address.
///
/// The keys and values are those HA 2025.4's MQTT platforms validate
/// (`homeassistant/components/mqtt/`: `schemas.py` for the common keys, `device` and
/// `origin`; `device_tracker.py`, `sensor.py`, `binary_sensor.py`, `button.py`,
/// `event.py`), each written out in full (no abbreviations).
package struct HomeAssistantDiscovery: Sendable {
    /// The discovery prefix Home Assistant listens on (`homeassistant` by default).
    package let prefix: String
    package let topics: Topics
    /// The web interface's address, the devices' `configuration_url`; nil leaves it out.
    package let configurationURL: String?
    /// Where users of this Geotify get support, the origin's `support_url`; nil leaves
    /// it out.
    package let supportURL: String?
    private let presence: PresenceMessages

    /// A device's entities but its presence sensors, each by component, object id and the
    /// level under the topic prefix of the topic it reads (the reset button: writes),
    /// followed by the device: what `removals` empties for a removed device, and what the
    /// start's sweep (`RetainedSweep`) recognises as the bridge's own configs.
    package static let deviceEntities: [(component: String, object: String, level: String)] = [
        ("device_tracker", "tracker", "state"), ("sensor", "badge", "badge"), ("button", "reset_badge", "cmd"), ("event", "event", "event"),
    ]

    /// The event types of the event entity: the `event_type` a notification carries is
    /// its transition kind. Home Assistant ignores events whose type is not listed.
    package static let eventTypes = ["enter", "exit", "dwell"]

    /// The template that reads the device tracker's state from the state document, the
    /// topic its attributes come from too: Home Assistant then changes the tracker once
    /// per message, state and position together (its MQTT client writes an entity's
    /// state once after all of a message's callbacks: `EntityTopicState` in
    /// `components/mqtt/models.py`), where two topics made two changes per transition.
    ///
    /// The document's `tracker` gives `home` and `not_home`; in a named fence it gives
    /// `trackerReset`, which clears the tracker's location name, so Home Assistant takes
    /// the state from the position and its zones (the zone of the fence's name when the
    /// fence and the zone are the same place). The name itself cannot be passed: Home
    /// Assistant 2025.4's MQTT tracker keeps the raw payload, not the template's output,
    /// as the location name of any other value (`device_tracker.py`,
    /// `_tracker_message_received`), which here would be the whole document.
    package static let trackerTemplate =
        "{{ value_json.tracker if value_json.tracker in ['\(PresenceMessages.home)', '\(PresenceMessages.notHome)'] else '\(trackerReset)' }}"

    /// The tracker's `payload_reset` (Home Assistant's default, written out): the location
    /// name is cleared and the state follows the position.
    package static let trackerReset = "None"

    /// The discovery `settings` ask for under `topics`; nil with Home Assistant off.
    package static func of(_ settings: Settings, topics: Topics) -> HomeAssistantDiscovery? {
        guard settings.homeAssistantEnabled else { return nil }
        return HomeAssistantDiscovery(
            prefix: settings.homeAssistantPrefix, topics: topics,
            configurationURL: settings.homeAssistantDeviceURL, supportURL: settings.homeAssistantSupportURL)
    }

    package init(prefix: String = "homeassistant", topics: Topics, configurationURL: String? = nil, supportURL: String? = nil) {
        self.prefix = prefix
        self.topics = topics
        self.configurationURL = configurationURL
        self.supportURL = supportURL
        presence = PresenceMessages(topics: topics)
    }

    /// Where Home Assistant announces itself: `online` there means it (re)started and
    /// has forgotten non-retained state, so the bridge re-announces its entities.
    /// (https://www.home-assistant.io/integrations/mqtt/#birth-and-last-will-messages)
    package var birthTopic: String { Self.birthTopic(prefix: prefix) }

    /// The birth topic under the discovery prefix `prefix`: `<prefix>/status`.
    package static func birthTopic(prefix: String) -> String { "\(prefix)/status" }

    /// The node id of `device`: `objectID(of: "<topic prefix>/<device>")`, so bridges with
    /// different topic prefixes never share entities. `alice/phone` under `geotify`
    /// becomes `geotify_alice_phone_` followed by eight hex digits.
    ///
    /// A device whose first topic level is `occupancy` or `shard` would get the node id of
    /// a shared set (`sharedNodeID`: `occupancy/shared`) or of one of several instances
    /// (`bridgeNodeID`: `shard/1`), and a tracker so named would have its entities join
    /// that node in Home Assistant and its configs overwrite the node's: such a device's
    /// text is marked with a `#`, which no device identifier holds, so its id is of its
    /// own (`objectID` hashes it). Every other device's id is as it was.
    package func nodeID(of device: String) -> String {
        let first = device.prefix { $0 != "/" }
        let reserved = first == "occupancy" || first == "shard"
        return HomeAssistantDiscovery.objectID(of: "\(topics.prefix)/\(reserved ? "#" : "")\(device)")
    }

    /// The node id of the bridge itself: `objectID(of: "<topic prefix>")`, `geotify` by
    /// default. It cannot be a device's, whose text always holds a `/`, and so a hash.
    /// Each of several instances is a bridge of its own, `objectID(of:
    /// "<topic prefix>/shard/<index>")`, whose entities read its own status and
    /// statistics: one node for all of them showed whichever announced last.
    package var bridgeNodeID: String { HomeAssistantDiscovery.objectID(of: topics.instancePrefix) }

    /// Whether this bridge announces the shared sets' entities: the only instance, or
    /// instance 0 of several, which publishes the occupancy totals they read
    /// (`ShardOccupancy`), so that each config has one writer.
    package var announcesSharedSets: Bool { (topics.shard?.index ?? 0) == 0 }

    /// The node id of the shared set of `owner` (`shared` or a group's name):
    /// `objectID(of: "<topic prefix>/occupancy/<owner>")`.
    package func sharedNodeID(of owner: String) -> String {
        HomeAssistantDiscovery.objectID(of: "\(topics.prefix)/occupancy/\(owner)")
    }

    /// A discovery id for `text` made only of the characters Home Assistant allows,
    /// `[a-zA-Z0-9_-]`: every other character becomes `_`. When that changed anything,
    /// or when `text` itself ends like such an id (`_` and eight hex digits), `_` and
    /// eight hex digits of a stable hash of `text` are appended, so two different texts
    /// cannot get the same id unless their hashes collide (`alice/phone` and
    /// `alice_phone` differ).
    package static func objectID(of text: String) -> String {
        let sanitised = String(String.UnicodeScalarView(text.unicodeScalars.map { scalar in
            isAllowed(scalar) ? scalar : "_"
        }))
        guard sanitised != text || looksHashed(text) || text.isEmpty else { return text }
        return "\(sanitised)_\(StableHash.shortHex(text))"
    }

    /// Everything to announce at start and after Home Assistant's birth message: the
    /// bridge's configs, then those of every device in `devices` (device → fences, as
    /// `FenceBook.announcedFences`), devices sorted by id, then those of every shared set
    /// in `shared` (owner → fences, as `FenceBook.announcedSharedFences`), owners sorted.
    package func announcement(devices: [String: [Fence]], shared: [String: [Fence]]) -> [OutboxMessage] {
        bridgeConfigs() + configs(devices: devices) + shared.keys.sorted().flatMap { configs(owner: $0, fences: shared[$0] ?? []) }
    }

    /// The configs of every device in `devices` (device → fences), devices sorted by id:
    /// what to announce again for the devices whose fences changed.
    package func configs(devices: [String: [Fence]]) -> [OutboxMessage] {
        devices.keys.sorted().flatMap { configs(device: $0, fences: devices[$0] ?? []) }
    }

    /// The retained discovery configs of all entities of `device` with `fences` (its
    /// fences, in the order of the fence file): tracker, badge sensor, reset button,
    /// event, then one presence binary sensor per fence.
    package func configs(device: String, fences: [Fence]) -> [OutboxMessage] {
        let entities = Entities(discovery: self, node: nodeID(of: device), device: [
            "name": .string(device),
            "model": "Tracked device",
            "via_device": .string(bridgeNodeID),
        ])
        var messages = [
            entities.config("device_tracker", "tracker", name: nil, [
                "state_topic": .string(presence.stateTopic(device)),
                "value_template": .string(HomeAssistantDiscovery.trackerTemplate),
                "json_attributes_topic": .string(presence.stateTopic(device)),
                "source_type": "gps",
                "payload_home": .string(PresenceMessages.home),
                "payload_not_home": .string(PresenceMessages.notHome),
                "payload_reset": .string(HomeAssistantDiscovery.trackerReset),
            ]),
            entities.config("sensor", "badge", name: "Badge", [
                "state_topic": .string(topics.badge(device)),
                "state_class": "measurement",
                "icon": "mdi:bell-badge",
            ]),
            entities.config("button", "reset_badge", name: "Reset badge", [
                "command_topic": .string("\(topics.prefix)/cmd/\(device)"),
                "payload_press": #"{"action":"resetBadge"}"#,
                "retain": false,
                "entity_category": "config",
            ]),
            entities.config("event", "event", name: "Fence event", [
                "state_topic": .string(topics.event(device)),
                "event_types": .array(HomeAssistantDiscovery.eventTypes.map { .string($0) }),
            ]),
        ]
        for fence in fences {
            messages.append(entities.config("binary_sensor", HomeAssistantDiscovery.presenceObjectID(fence.identifier), name: fence.displayName, [
                "state_topic": .string(presence.presenceTopic(device, fence: fence.identifier)),
                "payload_on": .string(PresenceMessages.inside),
                "payload_off": .string(PresenceMessages.outside),
                "device_class": "presence",
            ]))
        }
        return messages
    }

    /// The bridge's device: its connectivity, from the retained `geotify/status` the
    /// bridge sets `online` when it connects and its will sets `offline`, and its
    /// statistics, from the retained report on `geotify/stats` (`StatsReport`).
    package func bridgeConfigs() -> [OutboxMessage] {
        let name = topics.prefix == Topics().prefix ? "Geotify" : "Geotify \(topics.prefix)"
        let entities = Entities(discovery: self, node: bridgeNodeID, device: [
            "name": .string(topics.shard.map { "\(name) instance \($0.index)" } ?? name),
            "model": "Geotify geofence bridge",
        ])
        let stats = StatsReport.topic(topics)
        var messages = [
            entities.config("binary_sensor", "connectivity", name: "Connectivity", available: false, [
                "state_topic": .string(topics.status),
                "payload_on": "online",
                "payload_off": "offline",
                "device_class": "connectivity",
                "entity_category": "diagnostic",
            ]),
        ]
        for statistic in HomeAssistantDiscovery.statistics {
            var keys: [(String, JSON)] = [
                ("state_topic", .string(stats)),
                ("value_template", .string(statistic.template)),
                ("entity_category", "diagnostic"),
            ]
            keys += statistic.keys
            messages.append(entities.config("sensor", statistic.object, name: statistic.name, keys))
        }
        return messages
    }

    /// The statistics sensors of the bridge: object id, name, the template that reads the
    /// value from the `StatsReport` document, and the sensor's own keys.
    private static let statistics: [(object: String, name: String, template: String, keys: [(String, JSON)])] = [
        ("uptime", "Uptime", "{{ value_json.uptime | default(None) }}",
         [("device_class", "duration"), ("unit_of_measurement", "s"), ("suggested_display_precision", 0)]),
        ("devices", "Devices", "{{ value_json.devices }}", [("state_class", "measurement"), ("icon", "mdi:cellphone-marker")]),
        ("fences", "Fences", "{{ value_json.fences }}", [("state_class", "measurement"), ("icon", "mdi:map-marker-radius")]),
        ("notifications", "Notifications", "{{ value_json.counters.notifications | default(0) }}",
         [("state_class", "total_increasing"), ("icon", "mdi:bell-ring")]),
        ("refused", "Refused messages", "{{ (value_json.counters.errors | default({})).values() | sum }}",
         [("state_class", "total_increasing"), ("icon", "mdi:message-alert")]),
        ("latency_p99", "Evaluation latency p99", "{{ value_json.latency_ms.p99 | default(None) }}",
         [("device_class", "duration"), ("unit_of_measurement", "ms"), ("state_class", "measurement")]),
    ]

    /// The configs of the shared set of `owner` (`shared`, or a group's name) with
    /// `fences`, as a device of its own: per fence, a sensor with how many devices are
    /// inside and an occupancy binary sensor that is on while anyone is.
    /// With several instances only instance 0 announces them (`announcesSharedSets`),
    /// reading the totals it publishes; every instance's own part of a count is no
    /// entity's.
    package func configs(owner: String, fences: [Fence]) -> [OutboxMessage] {
        guard announcesSharedSets else { return [] }
        let entities = Entities(discovery: self, node: sharedNodeID(of: owner), device: [
            "name": .string(owner == SharedFences.everyDevice ? "Shared fences" : "Shared fences of \(owner)"),
            "model": "Shared fences",
            "via_device": .string(bridgeNodeID),
        ])
        return fences.flatMap { fence in
            let topic = JSON.string(topics.occupancyTotal(owner: owner, fence: fence.identifier))
            let object = HomeAssistantDiscovery.objectID(of: fence.identifier)
            return [
                entities.config("sensor", "occupancy_\(object)", name: "\(fence.displayName) occupancy", [
                    "state_topic": topic,
                    "state_class": "measurement",
                    "icon": "mdi:account-group",
                ]),
                entities.config("binary_sensor", "occupied_\(object)", name: fence.displayName, [
                    "state_topic": topic,
                    "value_template": "{{ 'ON' if value | int(0) > 0 else 'OFF' }}",
                    "device_class": "occupancy",
                ]),
            ]
        }
    }

    /// Empty retained configs, which make Home Assistant delete the entities, for what is
    /// in `previous` but not in `current` (device → fences, and owner → shared fences):
    /// every entity of a removed device, the presence sensor of each removed fence of a
    /// kept device, and both occupancy entities of each removed shared fence. Sorted by
    /// topic. (`PresenceMessages.removals` puts them before the device's retained topics.)
    package func removals(
        previous: [String: [Fence]], current: [String: [Fence]],
        previousShared: [String: [Fence]] = [:], currentShared: [String: [Fence]] = [:]
    ) -> [OutboxMessage] {
        var topics: [String] = []
        for (device, fences) in previous {
            let kept = current[device].map { Set($0.map(\.identifier)) }
            topics += entityConfigTopics(
                of: device, device: kept == nil, presence: fences.map(\.identifier).filter { kept?.contains($0) != true })
        }
        for (owner, fences) in previousShared where announcesSharedSets {
            let node = sharedNodeID(of: owner)
            let kept = Set((currentShared[owner] ?? []).map(\.identifier))
            for fence in fences where !kept.contains(fence.identifier) {
                let object = HomeAssistantDiscovery.objectID(of: fence.identifier)
                topics += [configTopic("sensor", node, "occupancy_\(object)"), configTopic("binary_sensor", node, "occupied_\(object)")]
            }
        }
        return topics.sorted().map { OutboxMessage(topic: $0, payload: [], qos: 1, retain: true) }
    }

    /// Empty retained configs that delete every entity of `device`, which the bridge
    /// forgets (removed from the fence file): its tracker, badge, reset button and event,
    /// and the presence sensor of each of `fences` (identifiers). Sorted by topic. The
    /// lane sends them before it empties the device's topics (`LaneCore.forget`), so Home
    /// Assistant has dropped the entities when an empty state comes: an empty state
    /// document on a tracker that still exists makes it log a JSON warning and two
    /// template errors.
    package func forgetting(_ device: String, fences: [String]) -> [OutboxMessage] {
        entityConfigTopics(of: device, device: true, presence: fences).sorted()
            .map { OutboxMessage(topic: $0, payload: [], qos: 1, retain: true) }
    }

    /// The config topics of `device`'s own entities (when `device`) and of the presence
    /// sensors of `presence` (fence identifiers).
    private func entityConfigTopics(of device: String, device own: Bool, presence: [String]) -> [String] {
        let node = nodeID(of: device)
        return (own ? HomeAssistantDiscovery.deviceEntities.map { configTopic($0.component, node, $0.object) } : [])
            + presence.map { configTopic("binary_sensor", node, HomeAssistantDiscovery.presenceObjectID($0)) }
    }

    /// `<prefix>/<component>/<node_id>/<object_id>/config`.
    package func configTopic(_ component: String, _ node: String, _ object: String) -> String {
        Topics.path(prefix, component, node, object, "config")
    }

    /// The object id of the presence sensor of `fence`.
    static func presenceObjectID(_ fence: String) -> String {
        "presence_\(objectID(of: fence))"
    }

    /// The entities of one Home Assistant device: what their configs share.
    private struct Entities {
        let discovery: HomeAssistantDiscovery
        let node: String
        /// The device's own keys (name, model, via_device), an object; the shared ones are
        /// added.
        let device: JSON

        /// The config message of one entity: `name` (null: the entity is the device's main
        /// feature and takes its name), `unique_id`, the platform's own `keys`, then
        /// `availability` (unless `available` is false), `qos`, `device` and `origin`.
        func config(
            _ component: String, _ object: String, name: String?, available: Bool = true, _ keys: KeyValuePairs<String, JSON>
        ) -> OutboxMessage {
            config(component, object, name: name, available: available, keys.map { ($0.key, $0.value) })
        }

        func config(_ component: String, _ object: String, name: String?, available: Bool = true, _ keys: [(String, JSON)]) -> OutboxMessage {
            var config = JSONObject()
            config["name"] = name.map(JSON.string) ?? .null
            config["unique_id"] = .string("\(node)_\(object)")
            for (key, value) in keys { config[key] = value }
            if available {
                config["availability"] = [[
                    "topic": .string(discovery.topics.status), "payload_available": "online", "payload_not_available": "offline",
                ]]
            }
            config["qos"] = 1
            var device = self.device.objectValue ?? JSONObject()
            device.members.insert(JSONObject.Member(key: "identifiers", value: [.string(node)]), at: 0)
            device["manufacturer"] = "Geotify"
            device["sw_version"] = .string(GeotifyVersion.current)
            if let url = discovery.configurationURL { device["configuration_url"] = .string(url) }
            config["device"] = .object(device)
            var origin = JSONObject()
            origin["name"] = "Geotify"
            origin["sw_version"] = .string(GeotifyVersion.current)
            if let url = discovery.supportURL { origin["support_url"] = .string(url) }
            config["origin"] = .object(origin)
            return OutboxMessage(
                topic: discovery.configTopic(component, node, object), payload: JSONWriter().bytes(.object(config)), qos: 1, retain: true)
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
