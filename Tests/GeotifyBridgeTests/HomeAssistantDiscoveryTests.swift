import Testing
import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore

@Suite("Home Assistant discovery")
struct HomeAssistantDiscoveryTests {
    let discovery = HomeAssistantDiscovery(topics: Topics())
    let linked = HomeAssistantDiscovery(
        topics: Topics(), configurationURL: "http://geotify.local:8080/", supportURL: "https://example.org/geotify/support")

    static func fence(_ identifier: String, note: String = "", name: String? = nil) -> Fence {
        Fence(identifier: identifier, region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100),
              note: note, eventType: [.onEntry, .onExit], name: name)
    }

    static let fences = [fence("home", note: "Welcome home"), fence("office", note: "Left the office")]

    /// Everything one bridge announces: devices with plain, named and oddly named fences,
    /// and two shared sets.
    func announcement(_ discovery: HomeAssistantDiscovery) -> [OutboxMessage] {
        discovery.announcement(
            devices: [
                "alice/phone": Self.fences + [Self.fence("supermarket", name: "Supermarket"), Self.fence("Büro 2")],
                "van/7": [Self.fence("depot")],
            ],
            shared: ["shared": [Self.fence("school", name: "School")], "family": [Self.fence("grandma")]])
    }

    /// The config payload as an object (failing the test when it is not one).
    func config(_ message: OutboxMessage) throws -> JSONObject {
        try #require(try JSONParser().parse(message.payload).objectValue)
    }

    /// The message whose topic is `<prefix>/<component>/<node>/<object>/config`.
    func message(_ messages: [OutboxMessage], _ component: String, _ object: String, device: String = "alice/phone", node: String? = nil) throws -> OutboxMessage {
        let topic = "homeassistant/\(component)/\(node ?? discovery.nodeID(of: device))/\(object)/config"
        return try #require(messages.first { $0.topic == topic }, "no config on \(topic)")
    }

    static func isDiscoveryID(_ text: Substring) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
        }
    }

    @Test func objectIDsAreSanitisedStableAndDistinct() {
        #expect(HomeAssistantDiscovery.objectID(of: "home") == "home")
        #expect(HomeAssistantDiscovery.objectID(of: "van-7_b") == "van-7_b")
        let phone = HomeAssistantDiscovery.objectID(of: "alice/phone")
        #expect(phone.hasPrefix("alice_phone_"))
        #expect(phone.count == "alice_phone_".count + 8)
        #expect(phone == HomeAssistantDiscovery.objectID(of: "alice/phone"))
        #expect(HomeAssistantDiscovery.objectID(of: "alice_phone") == "alice_phone")
        #expect(HomeAssistantDiscovery.objectID(of: "alice phone") != phone)
        // A text that already looks like a hashed id is hashed too, so it cannot be one.
        #expect(HomeAssistantDiscovery.objectID(of: phone) != phone)
        let kitchen = HomeAssistantDiscovery.objectID(of: "Küche oben")
        #expect(kitchen.hasPrefix("K_che_oben_"))
        // Exactly `_` and eight hex digits, the shortest text that looks hashed, is hashed too.
        #expect(HomeAssistantDiscovery.objectID(of: "_0123abcd") != "_0123abcd")
        #expect(HomeAssistantDiscovery.objectID(of: "_0123abcd").hasPrefix("_0123abcd_"))
        // An empty text still gives an id Home Assistant takes (it refuses an empty one).
        let empty = HomeAssistantDiscovery.objectID(of: "")
        for id in [phone, kitchen, HomeAssistantDiscovery.objectID(of: phone), empty] {
            #expect(Self.isDiscoveryID(id[...]))
        }
    }

    @Test func idsArePinned() {
        // FNV-1a of the UTF-8 bytes, low 32 bits: the ids must not change between runs,
        // platforms or versions, or Home Assistant would see new entities.
        #expect(HomeAssistantDiscovery.objectID(of: "alice/phone") == "alice_phone_e0d49254")
        #expect(discovery.nodeID(of: "alice/phone") == "geotify_alice_phone_ab26efe8")
    }

    /// A tracker named `occupancy/shared` had the node of the shared fences' occupancy
    /// entities, and one named `shard/1` the node of instance 1 of several: their configs
    /// overwrote those nodes' in Home Assistant. Each now has a node of its own; every
    /// other device keeps the id it had.
    @Test func aDeviceNamedLikeASharedSetOrAnInstanceHasANodeOfItsOwn() throws {
        #expect(discovery.nodeID(of: "occupancy/shared") != discovery.sharedNodeID(of: "shared"))
        #expect(discovery.nodeID(of: "occupancy/family") != discovery.sharedNodeID(of: "family"))
        let sharded = HomeAssistantDiscovery(topics: Topics(shard: try ShardAssignment(index: 1, count: 2)))
        #expect(sharded.nodeID(of: "shard/1") != sharded.bridgeNodeID)
        #expect(sharded.nodeID(of: "shard/1") != sharded.nodeID(of: "shard_1"))
        #expect(discovery.nodeID(of: "occupancy/shared").hasPrefix("geotify__occupancy_shared_"))
        #expect(Self.isDiscoveryID(discovery.nodeID(of: "shard/1")[...]))
        #expect(discovery.nodeID(of: "occupancyx/shared") == HomeAssistantDiscovery.objectID(of: "geotify/occupancyx/shared"), "only the whole first level is reserved")
    }

    @Test func everyPayloadMatchesHomeAssistantsSchemaKeyByKey() throws {
        for discovery in [discovery, linked] {
            let messages = announcement(discovery)
            #expect(messages.count == 7 + 8 + 5 + 4)
            for message in messages {
                let component = String(message.topic.split(separator: "/")[1])
                #expect(HomeAssistantSchema.problems(component, try config(message)) == [], "\(message.topic)")
            }
        }
    }

    @Test func theSchemaCheckCatchesWhatHomeAssistantWouldDropOrRefuse() {
        var base = JSONObject()
        base["state_topic"] = "a/b"
        base["unique_id"] = "x"
        var misspelt = base
        misspelt["device_clas"] = "presence"
        #expect(HomeAssistantSchema.problems("binary_sensor", misspelt) == ["device_clas is not a key of binary_sensor"])
        var category = base
        category["entity_category"] = "config"
        #expect(HomeAssistantSchema.problems("sensor", category) == ["a sensor cannot have entity_category config"])
        #expect(HomeAssistantSchema.problems("event", base) == ["missing required event_types"])
        var device = base
        device["device"] = ["name": "x", "sw_version": 1]
        #expect(HomeAssistantSchema.problems("sensor", device) == [
            "device: a device needs identifiers or connections", "device: device.sw_version: a number is not a string",
        ])
        var unit = base
        unit["device_class"] = "duration"
        unit["unit_of_measurement"] = "seconds"
        #expect(HomeAssistantSchema.problems("sensor", unit) == ["unit seconds is not one of device class duration"])
        var topic = base
        topic["state_topic"] = "a/#/b"
        #expect(HomeAssistantSchema.problems("sensor", topic) == ["state_topic: # must be the last level in a/#/b"])
    }

    @Test func everyConfigHasWhatHomeAssistantRequires() throws {
        let messages = announcement(linked)
        var uniqueIDs = Set<String>()
        for message in messages {
            #expect(message.retain)
            #expect(message.qos == 1)
            let levels = message.topic.split(separator: "/", omittingEmptySubsequences: false)
            #expect(levels.count == 5)
            #expect(levels.first == "homeassistant")
            #expect(Self.isDiscoveryID(levels[2]) && Self.isDiscoveryID(levels[3]))
            #expect(levels.last == "config")
            let config = try config(message)
            let uniqueID = try #require(config["unique_id"]?.stringValue)
            #expect(uniqueID == "\(levels[2])_\(levels[3])")
            uniqueIDs.insert(uniqueID)
            #expect(config["device"]?["identifiers"] == [.string(String(levels[2]))])
            #expect(config["device"]?["manufacturer"] == "Geotify")
            #expect(config["device"]?["sw_version"] == .string(GeotifyVersion.current))
            #expect(config["device"]?["configuration_url"] == "http://geotify.local:8080/")
            #expect(config["origin"] == ["name": "Geotify", "sw_version": .string(GeotifyVersion.current), "support_url": "https://example.org/geotify/support"])
            if levels[2] != "geotify" {
                #expect(config["device"]?["via_device"] == "geotify")
            }
            if levels[3] != "connectivity" {
                #expect(config["availability"] == [["topic": "geotify/status", "payload_available": "online", "payload_not_available": "offline"]])
            }
        }
        #expect(uniqueIDs.count == messages.count)
        for message in discovery.configs(device: "alice/phone", fences: Self.fences) {
            let config = try config(message)
            #expect(config["device"]?["configuration_url"] == nil)
            #expect(config["origin"] == ["name": "Geotify", "sw_version": .string(GeotifyVersion.current)])
            #expect(config["device"]?["name"] == "alice/phone")
            #expect(config["device"]?["model"] == "Tracked device")
        }
    }

    @Test func theDeviceTrackerIsTheDevicesMainEntityAndReadsStateAndPositionFromOneTopic() throws {
        let tracker = try config(message(discovery.configs(device: "alice/phone", fences: Self.fences), "device_tracker", "tracker"))
        #expect(tracker["name"] == .null)
        #expect(tracker["state_topic"] == "geotify/state/alice/phone", "one message changes state and position together")
        #expect(tracker["json_attributes_topic"] == "geotify/state/alice/phone")
        #expect(tracker["value_template"] == "{{ value_json.tracker if value_json.tracker in ['home', 'not_home'] else 'None' }}",
                "home and not_home pass; a named fence resets the location name, so Home Assistant's zones decide")
        #expect(tracker["source_type"] == "gps")
        #expect(tracker["payload_home"] == "home")
        #expect(tracker["payload_not_home"] == "not_home")
        #expect(tracker["payload_reset"] == "None")
        for message in discovery.configs(device: "alice/phone", fences: Self.fences) {
            let read = try config(message).members.filter { $0.key.hasSuffix("_topic") && $0.key != "command_topic" }
            #expect(!read.contains { $0.value == "geotify/tracker/alice/phone" }, "Home Assistant does not subscribe to the tracker topic")
        }
    }

    @Test func eachFenceHasAPresenceSensorNamedForPeople() throws {
        let fences = [Self.fence("supermarket", note: "Shopping", name: "Supermarket"), Self.fence("office", note: "At work"), Self.fence("gym")]
        let messages = discovery.configs(device: "alice/phone", fences: fences)
        for (fence, name) in [("supermarket", "Supermarket"), ("office", "At work"), ("gym", "gym")] {
            let sensor = try config(message(messages, "binary_sensor", "presence_\(fence)"))
            #expect(sensor["name"] == .string(name))
            #expect(sensor["state_topic"] == .string("geotify/presence/alice/phone/\(fence)"))
            #expect(sensor["payload_on"] == "inside")
            #expect(sensor["payload_off"] == "outside")
            #expect(sensor["device_class"] == "presence")
            #expect(sensor["entity_category"] == nil)
        }
        let odd = discovery.configs(device: "alice/phone", fences: [Self.fence("Büro 2")])
        let topic = try #require(odd.last?.topic)
        #expect(topic.hasPrefix("homeassistant/binary_sensor/\(discovery.nodeID(of: "alice/phone"))/presence_B_ro_2_"))
        #expect(try config(#require(odd.last))["state_topic"] == "geotify/presence/alice/phone/Büro 2")
    }

    @Test func theBadgeSensorAndTheResetButton() throws {
        let messages = discovery.configs(device: "alice/phone", fences: [])
        let badge = try config(message(messages, "sensor", "badge"))
        #expect(badge["state_topic"] == "geotify/badge/alice/phone")
        #expect(badge["state_class"] == "measurement")
        #expect(badge["entity_category"] == nil)
        let button = try config(message(messages, "button", "reset_badge"))
        #expect(button["command_topic"] == "geotify/cmd/alice/phone")
        #expect(button["entity_category"] == "config")
        let press = try #require(button["payload_press"]?.stringValue)
        #expect(try Command.decode(Array(press.utf8), maximumBytes: 1_000).result.get().action == .resetBadge)
    }

    @Test func theEventEntityListsEveryTransitionKind() throws {
        let event = try config(message(discovery.configs(device: "alice/phone", fences: []), "event", "event"))
        #expect(event["state_topic"] == "geotify/event/alice/phone")
        let types = try #require(event["event_types"]?.arrayValue).compactMap(\.stringValue)
        #expect(types == ["enter", "exit", "dwell"])
        for kind in TransitionKind.allCases {
            #expect(types.contains(kind.rawValue))
        }
    }

    @Test func prefixesAreHonoured() throws {
        let custom = HomeAssistantDiscovery(prefix: "ha", topics: Topics(prefix: "geo"))
        #expect(custom.birthTopic == "ha/status")
        #expect(discovery.birthTopic == "homeassistant/status")
        let messages = custom.configs(device: "van/7", fences: [Self.fence("depot")])
        #expect(messages.allSatisfy { $0.topic.hasPrefix("ha/") })
        #expect(custom.nodeID(of: "van/7") != discovery.nodeID(of: "van/7"))
        let tracker = try config(#require(messages.first))
        #expect(tracker["state_topic"] == "geo/state/van/7")
        #expect(tracker["availability"]?.arrayValue?.first?["topic"] == "geo/status")
    }

    @Test func theAnnouncementIsTheBridgeThenDevicesThenSharedSetsInOrder() {
        let messages = discovery.announcement(
            devices: ["van/7": [Self.fence("depot")], "alice/phone": Self.fences], shared: ["shared": [Self.fence("school")]])
        #expect(messages.count == 7 + 6 + 5 + 2)
        #expect(messages.prefix(7).allSatisfy { $0.topic.contains("/geotify/") })
        #expect(messages.dropFirst(7).prefix(6).allSatisfy { $0.topic.contains(discovery.nodeID(of: "alice/phone")) })
        #expect(messages.dropFirst(13).prefix(5).allSatisfy { $0.topic.contains(discovery.nodeID(of: "van/7")) })
        #expect(messages.suffix(2).allSatisfy { $0.topic.contains(discovery.sharedNodeID(of: "shared")) })
        #expect(discovery.configs(devices: ["van/7": [Self.fence("depot")]]) == discovery.configs(device: "van/7", fences: [Self.fence("depot")]))
    }

    @Test func theBridgeHasConnectivityAndStatistics() throws {
        let messages = discovery.bridgeConfigs()
        #expect(discovery.bridgeNodeID == "geotify")
        #expect(HomeAssistantDiscovery(topics: Topics(prefix: "geo/site 2")).bridgeNodeID.hasPrefix("geo_site_2_"))
        let connectivity = try config(message(messages, "binary_sensor", "connectivity", node: "geotify"))
        #expect(connectivity["state_topic"] == "geotify/status")
        #expect(connectivity["payload_on"] == "online")
        #expect(connectivity["payload_off"] == "offline")
        #expect(connectivity["device_class"] == "connectivity")
        #expect(connectivity["entity_category"] == "diagnostic")
        #expect(connectivity["availability"] == nil)
        #expect(connectivity["device"]?["name"] == "Geotify")
        #expect(connectivity["device"]?["via_device"] == nil)
        let sensors = try messages.dropFirst().map(config)
        #expect(sensors.compactMap { $0["name"]?.stringValue } == ["Uptime", "Devices", "Fences", "Notifications", "Refused messages", "Evaluation latency p99"])
        for sensor in sensors {
            #expect(sensor["state_topic"] == "geotify/stats")
            #expect(sensor["entity_category"] == "diagnostic")
            #expect(sensor["value_template"]?.stringValue?.hasPrefix("{{ ") == true)
        }
        #expect(sensors[0]["device_class"] == "duration" && sensors[0]["unit_of_measurement"] == "s")
        #expect(sensors[3]["value_template"] == "{{ value_json.counters.notifications | default(0) }}")
        #expect(sensors[3]["state_class"] == "total_increasing")
        #expect(HomeAssistantDiscovery(topics: Topics(prefix: "site2")).bridgeConfigs().first.map { try? config($0)["device"]?["name"] } == "Geotify site2")
    }

    /// Several instances: each is a bridge device of its own, reading its own status and
    /// statistics, and only instance 0, which publishes the occupancy totals, announces
    /// (and removes) the shared sets' entities, reading the totals, not its own parts.
    @Test func severalInstancesAreBridgesOfTheirOwnAndInstanceZeroAloneAnnouncesSharedSets() throws {
        let zero = HomeAssistantDiscovery(topics: Topics(shard: try ShardAssignment(index: 0, count: 2)))
        let one = HomeAssistantDiscovery(topics: Topics(shard: try ShardAssignment(index: 1, count: 2)))
        #expect(Set([zero.bridgeNodeID, one.bridgeNodeID, discovery.bridgeNodeID]).count == 3)
        for (instance, bridge) in [(0, zero), (1, one)] {
            let connectivity = try config(message(bridge.bridgeConfigs(), "binary_sensor", "connectivity", node: bridge.bridgeNodeID))
            #expect(connectivity["state_topic"] == .string("geotify/shard/\(instance)/status"))
            #expect(connectivity["device"]?["name"] == .string("Geotify instance \(instance)"))
            let uptime = try config(message(bridge.bridgeConfigs(), "sensor", "uptime", node: bridge.bridgeNodeID))
            #expect(uptime["state_topic"] == .string("geotify/shard/\(instance)/stats"))
        }
        let fences = [Self.fence("grandma")]
        let count = try config(message(zero.configs(owner: "family", fences: fences), "sensor", "occupancy_grandma", node: zero.sharedNodeID(of: "family")))
        #expect(count["state_topic"] == "geotify/occupancy/family/grandma")
        #expect(one.configs(owner: "family", fences: fences).isEmpty)
        #expect(one.announcement(devices: [:], shared: ["family": fences]) == one.bridgeConfigs())
        #expect(zero.removals(previous: [:], current: [:], previousShared: ["family": fences]).count == 2)
        #expect(one.removals(previous: [:], current: [:], previousShared: ["family": fences]).isEmpty)
    }

    @Test func sharedFencesHaveOccupancyEntitiesOnADeviceOfTheirOwn() throws {
        let messages = discovery.configs(owner: "family", fences: [Self.fence("grandma", name: "Grandma's"), Self.fence("school")])
        let node = discovery.sharedNodeID(of: "family")
        #expect(node.hasPrefix("geotify_occupancy_family_"))
        #expect(node != discovery.sharedNodeID(of: "shared"))
        let count = try config(message(messages, "sensor", "occupancy_grandma", node: node))
        #expect(count["name"] == "Grandma's occupancy")
        #expect(count["state_topic"] == "geotify/occupancy/family/grandma")
        #expect(count["state_class"] == "measurement")
        let occupied = try config(message(messages, "binary_sensor", "occupied_school", node: node))
        #expect(occupied["name"] == "school")
        #expect(occupied["state_topic"] == "geotify/occupancy/family/school")
        #expect(occupied["device_class"] == "occupancy")
        #expect(occupied["value_template"] == "{{ 'ON' if value | int(0) > 0 else 'OFF' }}")
        #expect(occupied["device"]?["name"] == "Shared fences of family")
        #expect(try config(#require(discovery.configs(owner: "shared", fences: [Self.fence("x")]).first))["device"]?["name"] == "Shared fences")
    }

    @Test func removedDevicesAndFencesGetEmptyRetainedConfigs() {
        let previous = ["alice/phone": Self.fences, "van/7": [Self.fence("depot")]]
        let current = ["alice/phone": [Self.fence("home", note: "Changed note")], "bob/watch": [Self.fence("gym")]]
        let removals = discovery.removals(previous: previous, current: current)
        let alice = discovery.nodeID(of: "alice/phone")
        let van = discovery.nodeID(of: "van/7")
        #expect(removals.map(\.topic) == [
            "homeassistant/binary_sensor/\(alice)/presence_office/config",
            "homeassistant/binary_sensor/\(van)/presence_depot/config",
            "homeassistant/button/\(van)/reset_badge/config",
            "homeassistant/device_tracker/\(van)/tracker/config",
            "homeassistant/event/\(van)/event/config",
            "homeassistant/sensor/\(van)/badge/config",
        ].sorted())
        #expect(removals.allSatisfy { $0.payload.isEmpty && $0.retain && $0.qos == 1 })
        // Every removal clears a topic that a config was announced on.
        let announced = Set(discovery.configs(devices: previous).map(\.topic))
        #expect(removals.allSatisfy { announced.contains($0.topic) })
        #expect(discovery.removals(previous: previous, current: previous).isEmpty)
    }

    @Test func removedSharedFencesLoseBothOccupancyEntities() {
        let removals = discovery.removals(
            previous: [:], current: [:],
            previousShared: ["family": [Self.fence("grandma"), Self.fence("school")]], currentShared: ["family": [Self.fence("school")]])
        let node = discovery.sharedNodeID(of: "family")
        #expect(removals.map(\.topic) == [
            "homeassistant/binary_sensor/\(node)/occupied_grandma/config",
            "homeassistant/sensor/\(node)/occupancy_grandma/config",
        ])
    }
}
