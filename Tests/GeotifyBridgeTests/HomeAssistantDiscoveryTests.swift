import Testing
import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore

@Suite("Home Assistant discovery")
struct HomeAssistantDiscoveryTests {
    let discovery = HomeAssistantDiscovery(topics: Topics())

    static func fence(_ identifier: String, note: String = "") -> Fence {
        Fence(identifier: identifier, region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100),
              note: note, eventType: [.onEntry, .onExit])
    }

    static let fences = [fence("home", note: "Welcome home"), fence("office", note: "Left the office")]

    /// The config payload as an object (failing the test when it is not one).
    func config(_ message: OutboxMessage) throws -> JSONObject {
        try #require(try JSONParser().parse(message.payload).objectValue)
    }

    /// The message whose topic is `<prefix>/<component>/<node>/<object>/config`.
    func message(_ messages: [OutboxMessage], _ component: String, _ object: String, device: String = "alice/phone") throws -> OutboxMessage {
        let topic = "homeassistant/\(component)/\(discovery.nodeID(of: device))/\(object)/config"
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
        for id in [phone, kitchen, HomeAssistantDiscovery.objectID(of: phone)] {
            #expect(Self.isDiscoveryID(id[...]))
        }
    }

    @Test func idsArePinned() {
        // FNV-1a of the UTF-8 bytes, low 32 bits: the ids must not change between runs,
        // platforms or versions, or Home Assistant would see new entities.
        #expect(HomeAssistantDiscovery.objectID(of: "alice/phone") == "alice_phone_e0d49254")
        #expect(discovery.nodeID(of: "alice/phone") == "geotify_alice_phone_ab26efe8")
    }

    @Test func everyConfigHasWhatHomeAssistantRequires() throws {
        let messages = discovery.configs(device: "alice/phone", fences: Self.fences)
        #expect(messages.count == 6)
        var uniqueIDs = Set<String>()
        for message in messages {
            #expect(message.retain)
            #expect(message.qos == 1)
            let levels = message.topic.split(separator: "/", omittingEmptySubsequences: false)
            #expect(levels.count == 5)
            #expect(levels.first == "homeassistant")
            #expect(["device_tracker", "binary_sensor", "sensor", "button", "event"].contains(String(levels[1])))
            #expect(Self.isDiscoveryID(levels[2]) && Self.isDiscoveryID(levels[3]))
            #expect(levels.last == "config")
            let config = try config(message)
            #expect(config["name"]?.stringValue?.isEmpty == false)
            let uniqueID = try #require(config["unique_id"]?.stringValue)
            #expect(uniqueID == "\(levels[2])_\(levels[3])")
            uniqueIDs.insert(uniqueID)
            #expect(config["device"]?["identifiers"] == [.string(String(levels[2]))])
            #expect(config["device"]?["name"] == "alice/phone")
            #expect(config["availability"] == [["topic": "geotify/status", "payload_available": "online", "payload_not_available": "offline"]])
            #expect(config["origin"]?["name"] == "Geotify")
            #expect(config["state_topic"] != nil || config["command_topic"] != nil)
        }
        #expect(uniqueIDs.count == messages.count)
    }

    @Test func theDeviceTrackerReadsTheTrackerAndStateTopics() throws {
        let tracker = try config(message(discovery.configs(device: "alice/phone", fences: Self.fences), "device_tracker", "tracker"))
        #expect(tracker["state_topic"] == "geotify/tracker/alice/phone")
        #expect(tracker["json_attributes_topic"] == "geotify/state/alice/phone")
        #expect(tracker["source_type"] == "gps")
        #expect(tracker["payload_home"] == "home")
        #expect(tracker["payload_not_home"] == "not_home")
    }

    @Test func eachFenceHasAPresenceSensor() throws {
        let messages = discovery.configs(device: "alice/phone", fences: Self.fences)
        for fence in ["home", "office"] {
            let sensor = try config(message(messages, "binary_sensor", "presence_\(fence)"))
            #expect(sensor["name"] == .string(fence))
            #expect(sensor["state_topic"] == .string("geotify/presence/alice/phone/\(fence)"))
            #expect(sensor["payload_on"] == "inside")
            #expect(sensor["payload_off"] == "outside")
            #expect(sensor["device_class"] == "presence")
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
        let button = try config(message(messages, "button", "reset_badge"))
        #expect(button["command_topic"] == "geotify/cmd/alice/phone")
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
        #expect(tracker["state_topic"] == "geo/tracker/van/7")
        #expect(tracker["availability"]?.arrayValue?.first?["topic"] == "geo/status")
    }

    @Test func allDevicesAreAnnouncedInOrder() {
        let messages = discovery.configs(devices: ["van/7": [Self.fence("depot")], "alice/phone": Self.fences])
        #expect(messages.count == 11)
        #expect(messages.prefix(6).allSatisfy { $0.topic.contains(discovery.nodeID(of: "alice/phone")) })
        #expect(messages.suffix(5).allSatisfy { $0.topic.contains(discovery.nodeID(of: "van/7")) })
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
}
