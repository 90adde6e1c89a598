import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyStore

/// Which retained topics found at a start the sweep clears (`RetainedSweep`): pure, no
/// broker. The topics are those the bridge writes for an earlier fence file (`before`),
/// judged against the file in force (`after`) and the devices whose state is kept.
@Suite("RetainedSweep")
struct RetainedSweepTests {
    static let before = """
        { "devices": { "alice/phone": [
              { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntryAndExit" },
              { "identifier": "gym", "name": "Gym", "latitude": 52.53, "longitude": 13.41, "radius": 100, "eventType": "onEntryAndExit" } ],
            "carol/phone": [
              { "identifier": "work", "latitude": 52.50, "longitude": 13.40, "radius": 100, "eventType": "onEntryAndExit" } ],
            "bob/phone": [] },
          "groups": { "family": ["alice/phone", "bob/phone"] },
          "shared": [
            { "identifier": "office", "latitude": 52.5163, "longitude": 13.3777, "radius": 150, "eventType": "onEntryAndExit" },
            { "identifier": "mall", "latitude": 52.51, "longitude": 13.37, "radius": 150, "eventType": "onEntryAndExit" },
            { "identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150, "eventType": "onEntryAndExit", "group": "family" } ] }
        """

    /// `before` with Alice's gym, Carol and the shared mall removed.
    static let after = """
        { "devices": { "alice/phone": [
              { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntryAndExit" } ],
            "bob/phone": [] },
          "groups": { "family": ["alice/phone", "bob/phone"] },
          "shared": [
            { "identifier": "office", "latitude": 52.5163, "longitude": 13.3777, "radius": 150, "eventType": "onEntryAndExit" },
            { "identifier": "school", "latitude": 52.53, "longitude": 13.38, "radius": 150, "eventType": "onEntryAndExit", "group": "family" } ] }
        """

    static func book(_ text: String) throws -> FenceBook {
        try #require(FenceFile(path: "fences.json").parse(Array(text.utf8)).book)
    }

    static func sweep(
        topics: Topics = Topics(), kept: [DeviceTopic] = DeviceTopic.allCases, homeAssistant: Bool = true, announceLimit: Int = 20
    ) -> RetainedSweep {
        RetainedSweep(
            topics: topics, kept: kept, discovery: homeAssistant ? HomeAssistantDiscovery(topics: topics) : nil,
            announceLimit: announceLimit)
    }

    /// Every retained topic the bridge writes for `book` with one instance: each
    /// device's state, tracker, badge and presence of each announced fence, each shared
    /// fence's count, and every Home Assistant config (the bridge's own included).
    static func retained(for book: FenceBook, topics: Topics = Topics()) -> [(topic: String, payload: [UInt8])] {
        let presence = PresenceMessages(topics: topics)
        let discovery = HomeAssistantDiscovery(topics: topics)
        var found: [(String, [UInt8])] = []
        let devices = book.announcedFences(limit: 20)
        for (device, fences) in devices {
            found += [(presence.stateTopic(device), Array("{}".utf8)), (presence.trackerTopic(device), Array("not_home".utf8)),
                      (topics.badge(device), Array("0".utf8))]
            found += fences.map { (presence.presenceTopic(device, fence: $0.identifier), Array("outside".utf8)) }
        }
        for (owner, set) in book.shared {
            found += set.fences.map { (topics.occupancyTotal(owner: owner, fence: $0.identifier), Array("0".utf8)) }
        }
        found += discovery.announcement(devices: devices, shared: book.announcedSharedFences(limit: 20)).map { ($0.topic, $0.payload) }
        return found
    }

    /// The topics of `found` that `sweep` reads as the bridge's and finds stale with `book`.
    static func stale(
        _ found: [(topic: String, payload: [UInt8])], sweep: RetainedSweep, book: FenceBook, states: Set<String> = []
    ) -> Set<String> {
        Set(found.compactMap { sweep.read(topic: $0.topic, payload: $0.payload) }
            .filter { sweep.isStale($0, book: book, holdsState: states.contains) }.map(\.topic))
    }

    @Test("nothing is stale when the fences are those the topics were written for")
    func nothingStaleForTheSameBook() throws {
        let book = try Self.book(Self.before)
        #expect(Self.stale(Self.retained(for: book), sweep: Self.sweep(), book: book).isEmpty)
    }

    /// Alice's gym, Carol (not sending positions any more: no state) and the shared mall
    /// were removed while the bridge was stopped: exactly their topics and entities go.
    @Test("a removed fence, a removed device and a removed shared fence: their topics and entities, no more")
    func removedFenceDeviceAndSharedFence() throws {
        let stale = Self.stale(Self.retained(for: try Self.book(Self.before)), sweep: Self.sweep(), book: try Self.book(Self.after))
        let discovery = HomeAssistantDiscovery(topics: Topics())
        let alice = discovery.nodeID(of: "alice/phone")
        let bob = discovery.nodeID(of: "bob/phone")
        let carol = discovery.nodeID(of: "carol/phone")
        let everyone = discovery.sharedNodeID(of: "shared")
        #expect(stale == [
            "geotify/presence/alice/phone/gym",
            "geotify/presence/alice/phone/mall", "geotify/presence/bob/phone/mall",
            "geotify/state/carol/phone", "geotify/tracker/carol/phone", "geotify/badge/carol/phone",
            "geotify/presence/carol/phone/work", "geotify/presence/carol/phone/office", "geotify/presence/carol/phone/mall",
            "geotify/occupancy/shared/mall",
            "homeassistant/binary_sensor/\(alice)/presence_gym/config",
            "homeassistant/binary_sensor/\(alice)/presence_mall/config", "homeassistant/binary_sensor/\(bob)/presence_mall/config",
            "homeassistant/device_tracker/\(carol)/tracker/config", "homeassistant/sensor/\(carol)/badge/config",
            "homeassistant/button/\(carol)/reset_badge/config", "homeassistant/event/\(carol)/event/config",
            "homeassistant/binary_sensor/\(carol)/presence_work/config", "homeassistant/binary_sensor/\(carol)/presence_office/config",
            "homeassistant/binary_sensor/\(carol)/presence_mall/config",
            "homeassistant/sensor/\(everyone)/occupancy_mall/config", "homeassistant/binary_sensor/\(everyone)/occupied_mall/config",
        ])
    }

    /// A device the file no longer names that still has state (it sends positions, as a
    /// device without fences may) keeps its last values and the presence of the fences
    /// that apply to every device; not its removed own fence, and not its entities (Home
    /// Assistant's are for the devices the file names).
    @Test("a device out of the file but with state keeps its last values and the shared fences' presence")
    func aDeviceWithStateKeepsItsLastValues() throws {
        let stale = Self.stale(
            Self.retained(for: try Self.book(Self.before)), sweep: Self.sweep(), book: try Self.book(Self.after), states: ["carol/phone"])
        #expect(!stale.contains("geotify/state/carol/phone"))
        #expect(!stale.contains("geotify/tracker/carol/phone"))
        #expect(!stale.contains("geotify/badge/carol/phone"))
        #expect(!stale.contains("geotify/presence/carol/phone/office"))
        #expect(stale.contains("geotify/presence/carol/phone/work"))
        #expect(stale.contains("geotify/presence/carol/phone/mall"))
        #expect(stale.contains("homeassistant/device_tracker/\(HomeAssistantDiscovery(topics: Topics()).nodeID(of: "carol/phone"))/tracker/config"))
    }

    /// The group's set renamed (`family` to `kin`, same members and fence): the old
    /// count and occupancy entities go; the devices' presence in the fence stays, since
    /// it applies to them still.
    @Test("a shared set renamed: the old set's count and entities, not the members' presence")
    func renamedSharedSet() throws {
        let renamed = Self.before.replacingOccurrences(of: "\"family\"", with: "\"kin\"")
        let stale = Self.stale(Self.retained(for: try Self.book(Self.before)), sweep: Self.sweep(), book: try Self.book(renamed))
        let family = HomeAssistantDiscovery(topics: Topics()).sharedNodeID(of: "family")
        #expect(stale == [
            "geotify/occupancy/family/school",
            "homeassistant/sensor/\(family)/occupancy_school/config", "homeassistant/binary_sensor/\(family)/occupied_school/config",
        ])
    }

    /// Alice left the group: her presence in the group's fence and its sensor go, Bob's
    /// stay, and so does the set's count.
    @Test("a device out of a group: its presence in the group's fences")
    func groupAccessRemoved() throws {
        let left = Self.before.replacingOccurrences(of: #"["alice/phone", "bob/phone"]"#, with: #"["bob/phone"]"#)
        let stale = Self.stale(Self.retained(for: try Self.book(Self.before)), sweep: Self.sweep(), book: try Self.book(left))
        let alice = HomeAssistantDiscovery(topics: Topics()).nodeID(of: "alice/phone")
        #expect(stale == ["geotify/presence/alice/phone/school", "homeassistant/binary_sensor/\(alice)/presence_school/config"])
    }

    /// Two instances: each clears only the topics and entities of the devices it owns,
    /// and only instance 0 the totals and shared fences' entities (it publishes them).
    @Test("with several instances each clears only what it writes")
    func anotherInstancesDevices() throws {
        let old = try Self.book(Self.before)
        let new = try Self.book(Self.after)
        let everything = Self.stale(Self.retained(for: old), sweep: Self.sweep(), book: new)
        var union: Set<String> = []
        for index in 0..<2 {
            let shard = try ShardAssignment(index: index, count: 2)
            let topics = Topics(shard: shard)
            let stale = Self.stale(Self.retained(for: old), sweep: Self.sweep(topics: topics), book: new)
            #expect(union.isDisjoint(with: stale), "no topic has two clearers")
            union.formUnion(stale)
            for topic in stale {
                let device = ["alice/phone", "bob/phone", "carol/phone"].first { device in
                    topic.contains("/\(device)/") || topic.hasSuffix("/\(device)")
                        || topic.contains(HomeAssistantDiscovery(topics: topics).nodeID(of: device))
                }
                if let device {
                    #expect(shard.owns(device), "\(topic) is the device's owner's to clear")
                } else {
                    #expect(index == 0, "\(topic) is instance 0's to clear")
                }
            }
        }
        // With several instances only instance 0 announces a shared fence's entities,
        // reading the total; before, every instance announced them reading its own part,
        // and instance 0 clears those too, whoever wrote them.
        let mall = try #require(old.shared["shared"]?.fence("mall"))
        let first = Self.sweep(topics: Topics(shard: try ShardAssignment(index: 0, count: 2)))
        let written = HomeAssistantDiscovery(topics: Topics(shard: try ShardAssignment(index: 0, count: 2)))
            .configs(owner: "shared", fences: [mall]).map { ($0.topic, $0.payload) }
        #expect(Self.stale(written, sweep: first, book: new).count == 2, "written by instance 0")
        for index in 0..<2 {
            let part = Array("geotify/shard/\(index)/occupancy/shared/mall".utf8)
            let total = Array("geotify/occupancy/shared/mall".utf8)
            let older = written.map { topic, payload in (topic, Self.replacing(total, with: part, in: payload)) }
            #expect(older.allSatisfy { RetainedSweep.stringMember("state_topic", in: $0.1) == String(decoding: part, as: UTF8.self) })
            #expect(Self.stale(older, sweep: first, book: new).count == 2, "written by instance \(index) reading its part, as before")
        }
        let shared = HomeAssistantDiscovery(topics: Topics()).sharedNodeID(of: "shared")
        #expect(union.filter { !$0.contains(shared) } == everything.filter { !$0.contains(shared) })
        #expect(union.isSuperset(of: ["geotify/state/carol/phone", "geotify/presence/alice/phone/gym", "geotify/occupancy/shared/mall"]))
    }

    /// `payload` with each run of `old` replaced by `new`.
    static func replacing(_ old: [UInt8], with new: [UInt8], in payload: [UInt8]) -> [UInt8] {
        var result: [UInt8] = []
        var index = payload.startIndex
        while index < payload.endIndex {
            if payload[index...].starts(with: old) {
                result += new
                index += old.count
            } else {
                result.append(payload[index])
                index += 1
            }
        }
        return result
    }

    @Test("topics whose levels are not valid identifiers are left alone", arguments: [
        "geotify/presence/alice", "geotify/presence/alice//phone/home", "geotify/presence//home", "geotify/presence/alice/phone/",
        "geotify/state/", "geotify/state", "geotify/state/alice//phone", "geotify/state/alice/phone/", "geotify/badge/\u{FFFD}",
        "geotify/tracker/ali\u{200B}ce", "geotify/occupancy/shared", "geotify/occupancy/shared/mall/x", "geotify/occupancy//mall",
        "geotify/presence/alice/phone/gy\u{7F}m", "geotify/statex/alice/phone", "geotify/stats", "geotify/status",
        "homeassistant/sensor/geotify/uptime/config", "homeassistant/binary_sensor/geotify/connectivity/config",
        "homeassistant/sensor/x/badge/config", "homeassistant/sensor/a/b/c/config", "homeassistant/sensor/badge/config",
    ])
    func oddLevelsAreLeftAlone(topic: String) throws {
        let sweep = Self.sweep()
        #expect(sweep.read(topic: topic, payload: Array("x".utf8)) == nil)
        let device = topic.hasPrefix("homeassistant/") ? nil : sweep.read(topic: topic, payload: [])
        #expect(device == nil)
    }

    /// Configs that are not this bridge's, though they look like its entities: another
    /// program's node, another prefix's bridge (`geotify/eu`, whose node ids a device
    /// `eu/...` of `geotify` would share), an object id that does not match the fence, a
    /// payload with an escape or too large to be one of the bridge's.
    @Test("discovery configs that are not the bridge's own are left alone")
    func foreignConfigsAreLeftAlone() throws {
        let sweep = Self.sweep()
        let discovery = HomeAssistantDiscovery(topics: Topics())
        let node = discovery.nodeID(of: "carol/phone")
        let other = HomeAssistantDiscovery(topics: Topics(prefix: "geotify/eu"))
        let otherBridge = other.configs(device: "carol/phone", fences: []) + other.configs(device: "eu/carol/phone", fences: [])
        let cases: [(String, String)] = [
            ("homeassistant/sensor/zigbee_1/badge/config", #"{"state_topic":"geotify/badge/carol/phone"}"#),
            ("homeassistant/sensor/\(node)/badge/config", #"{"state_topic":"geotify/badge/dave/phone"}"#),
            ("homeassistant/sensor/\(node)/badge/config", #"{"state_topic":"geotify/state/carol/phone"}"#),
            ("homeassistant/sensor/\(node)/badge/config", #"{"state_topic":"geotify\/badge/carol/phone"}"#),
            ("homeassistant/sensor/\(node)/badge/config", #"{"name":"badge"}"#),
            ("homeassistant/binary_sensor/\(node)/presence_gym/config", #"{"state_topic":"geotify/presence/carol/phone/work"}"#),
            ("homeassistant/sensor/\(node)/tracker/config", #"{"state_topic":"geotify/state/carol/phone"}"#),
            ("homeassistant/sensor/\(node)/badge/config",
             #"{"state_topic":"geotify/badge/carol/phone","pad":""# + String(repeating: "x", count: 9_000) + #""}"#),
        ]
        for (topic, payload) in cases {
            #expect(sweep.read(topic: topic, payload: Array(payload.utf8)) == nil, "\(topic) \(payload.prefix(80))")
        }
        // A node id that is the bridge's to a Swift string comparison but other bytes
        // (KELVIN SIGN for K): another topic to the broker.
        let kim = discovery.configs(device: "Kim/phone", fences: [])[1]
        let kelvin = kim.topic.replacingOccurrences(of: "Kim", with: "\u{212A}im")
        #expect(kelvin == kim.topic && Array(kelvin.utf8) != Array(kim.topic.utf8))
        #expect(sweep.read(topic: kim.topic, payload: kim.payload) != nil)
        #expect(sweep.read(topic: kelvin, payload: kim.payload) == nil)
        for config in otherBridge {
            #expect(sweep.read(topic: config.topic, payload: config.payload) == nil, "\(config.topic)")
        }
        // The same config as the bridge writes it is read.
        let own = discovery.configs(device: "carol/phone", fences: [])
        #expect(own.allSatisfy { sweep.read(topic: $0.topic, payload: $0.payload) != nil })
    }

    /// A config of exactly `maximumConfigBytes` may be the bridge's and is read; one byte
    /// more is not.
    @Test("a config of exactly the size limit is read, one byte more is not")
    func aConfigOfExactlyTheSizeLimit() {
        let sweep = Self.sweep()
        let topic = "homeassistant/sensor/\(HomeAssistantDiscovery(topics: Topics()).nodeID(of: "carol/phone"))/badge/config"
        let head = #"{"state_topic":"geotify/badge/carol/phone","pad":""#
        func payload(bytes: Int) -> [UInt8] {
            Array((head + String(repeating: "x", count: bytes - head.utf8.count - 2) + #""}"#).utf8)
        }
        let limit = RetainedSweep.maximumConfigBytes
        #expect(payload(bytes: limit).count == limit)
        #expect(sweep.read(topic: topic, payload: payload(bytes: limit)) == RetainedTopic(topic: topic, subject: .deviceEntity(device: "carol/phone", fence: nil)))
        #expect(sweep.read(topic: topic, payload: payload(bytes: limit + 1)) == nil)
    }

    /// `deviceTopics: ["state", "presence", "badge"]` and `["state"]`: a kind left out is
    /// stale for every device, the fences in force or not; the state document stays.
    @Test("device topics that deviceTopics leaves out are stale")
    func deviceTopicsSubset() throws {
        let book = try Self.book(Self.before)
        let found = Self.retained(for: book)
        let sweep = Self.sweep(kept: [.state, .presence, .badge])
        #expect(Self.stale(found, sweep: sweep, book: book) == ["geotify/tracker/alice/phone", "geotify/tracker/bob/phone", "geotify/tracker/carol/phone"])
        let onlyState = Self.stale(found, sweep: Self.sweep(kept: [.state], homeAssistant: false), book: book)
        #expect(!onlyState.contains("geotify/state/alice/phone"))
        #expect(onlyState.contains("geotify/badge/alice/phone"))
        #expect(onlyState.contains("geotify/presence/alice/phone/home"))
        #expect(onlyState.contains("geotify/tracker/bob/phone"))
        #expect(!onlyState.contains { $0.hasPrefix("homeassistant/") || $0.hasPrefix("geotify/occupancy/") })
    }

    /// With Home Assistant off no config is read or swept (nor subscribed to), whatever
    /// it says; the bridge's own topics still are.
    @Test("Home Assistant off: configs are not swept; on: they are")
    func homeAssistantOffAndOn() throws {
        let found = Self.retained(for: try Self.book(Self.before))
        let after = try Self.book(Self.after)
        let off = Self.sweep(homeAssistant: false)
        let staleOff = Self.stale(found, sweep: off, book: after)
        #expect(!staleOff.isEmpty)
        #expect(!staleOff.contains { $0.hasPrefix("homeassistant/") })
        #expect(!off.filters.contains { $0.hasPrefix("homeassistant/") })
        #expect(!off.covers("homeassistant/sensor/x/y/config"))
        let on = Self.sweep()
        #expect(Self.stale(found, sweep: on, book: after).subtracting(staleOff).count == 12)
        #expect(on.filters.contains("homeassistant/binary_sensor/+/+/config"))
        #expect(on.covers("homeassistant/sensor/x/y/config"))
    }

    /// A shared set past the announce limit is evaluated but not announced fence by
    /// fence: its fences' entities are stale (the announcer would not write them), its
    /// counts and the devices' presence in it are not.
    @Test("entities of a shared set past the announce limit are stale, its counts and presence are not")
    func announceLimit() throws {
        let book = try Self.book(Self.before)
        let stale = Self.stale(Self.retained(for: book), sweep: Self.sweep(announceLimit: 1), book: book)
        #expect(!stale.isEmpty)
        #expect(stale.allSatisfy { $0.hasPrefix("homeassistant/") && ($0.contains("/presence_office/") || $0.contains("_mall/") || $0.contains("occupancy_office") || $0.contains("occupied_office")) })
        let everyone = HomeAssistantDiscovery(topics: Topics()).sharedNodeID(of: "shared")
        #expect(stale.isSuperset(of: [
            "homeassistant/sensor/\(everyone)/occupancy_office/config", "homeassistant/binary_sensor/\(everyone)/occupied_office/config",
        ]), "the office is still in force, but its set is past the limit")
    }

    @Test("the filters cover the device topics, the totals and the configs, and nothing the bridge reads")
    func covers() {
        let sweep = Self.sweep(topics: Topics(prefix: "my/geo"))
        for topic in ["my/geo/presence/a/b/c", "my/geo/state/a", "my/geo/tracker/a", "my/geo/badge/a", "my/geo/occupancy/shared/x",
                      "homeassistant/button/n/o/config"] {
            #expect(sweep.covers(topic), "\(topic)")
        }
        for topic in ["my/geo/cmd/a", "my/geo/location/a", "my/geo/stats", "my/geo/statex/a", "my/geo/shard/0/occupancy/shared/x",
                      "geotify/state/a", "owntracks/a/b", "homeassistant/status"] {
            #expect(!sweep.covers(topic), "\(topic)")
        }
        let second = Self.sweep(topics: Topics(shard: try? ShardAssignment(index: 1, count: 2)))
        #expect(!second.covers("geotify/occupancy/shared/x"), "only instance 0 sweeps the totals")
        #expect(!second.filters.contains("geotify/occupancy/+/+"))
    }
}
