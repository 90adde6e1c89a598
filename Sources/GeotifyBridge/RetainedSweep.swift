import GeotifyCore
import GeotifyStore

/// Decides which of the bridge's own retained topics found on the broker at a start are
/// stale: left by fences and devices removed while the bridge was stopped, which nothing
/// running would clear (`FenceChangeAnnouncer` and `LaneCore.leaveRemovedFences` clear
/// what is removed while it runs, from the book before the change). The shell
/// (`RetainedCollection`) reads the topics under `filters` with `read` and keeps those
/// `isStale` finds stale as they come, which the lanes and the announcer ask `isStale`
/// again when they clear them; this is pure.
///
/// A topic is stale when the fence book in force no longer accounts for it:
///
/// | topic | stale when |
/// |---|---|
/// | `<prefix>/presence/<device>/<fence>` | the device has no such fence (own, or of a shared set that applies to it), or the book does not name the device and no state of it is kept |
/// | `<prefix>/state/<device>`, `tracker/<device>`, `badge/<device>` | the book does not name the device and no state of it is kept |
/// | any of those four | `deviceTopics` leaves its kind out |
/// | `<prefix>/occupancy/<owner>/<fence>` | the shared set has no such fence |
/// | a Home Assistant config of a device's tracker, badge, reset button or fence event | the book does not name the device |
/// | a Home Assistant config of a device's presence sensor | the fence is not among those the device is announced with (`DeviceFences.announced`) |
/// | a Home Assistant config of a shared fence's occupancy entities | the fence is not among the announced ones of its set (`FenceBook.announcedSharedFences`) |
///
/// A device without fences may send positions (without `strictDevices`): the lane keeps
/// its state and publishes its last values after each connection, so its topics stay.
/// Only what this instance writes is ever stale here: with several instances, the topics
/// and entities of the devices it owns (`ShardAssignment.owns`), and the occupancy totals
/// and shared fences' entities only on instance 0, which publishes the totals
/// (`ShardOccupancy`). A topic whose levels are not valid identifiers, or a config that
/// is not one this bridge would write (its node and object ids, and the topic its
/// entity reads, all checked), is none of the bridge's and is left alone.
package struct RetainedSweep: Sendable {
    package let topics: Topics
    /// The device topics kept (`Settings.deviceTopics`).
    package let kept: [DeviceTopic]
    /// Home Assistant's discovery when it is on: its configs are swept too.
    package let discovery: HomeAssistantDiscovery?
    /// Shared sets with more fences are not announced fence by fence
    /// (`FenceBook.announcedFences`).
    package let announceLimit: Int

    package init(topics: Topics, kept: [DeviceTopic], discovery: HomeAssistantDiscovery?, announceLimit: Int) {
        self.topics = topics
        self.kept = kept
        self.discovery = discovery
        self.announceLimit = announceLimit
    }

    /// The components of Home Assistant's entities the bridge announces per device and
    /// per shared fence (`HomeAssistantDiscovery`).
    private static let components: [String] = {
        var components: [String] = []
        // The devices' entities, then the presence and shared fences' sensors.
        for component in HomeAssistantDiscovery.deviceEntities.map(\.component) + ["binary_sensor", "sensor"] where !components.contains(component) {
            components.append(component)
        }
        return components
    }()

    /// The filters whose retained messages the sweep reads: the device topics, the
    /// occupancy totals where this instance publishes them, and the discovery configs of
    /// the components the bridge's entities use while Home Assistant is on.
    package var filters: [String] {
        var filters = DeviceTopic.allCases.map { "\(topics.prefix)/\($0.rawValue)/#" }
        if writesTotals { filters.append("\(topics.prefix)/occupancy/+/+") }
        if let discovery {
            filters += Self.components.map { "\(discovery.prefix)/\($0)/+/+/config" }
        }
        return filters
    }

    /// Whether `topic` falls under `filters` (what the collection takes from the network
    /// thread rather than routing it): a look at its start and end, no more.
    package func covers(_ topic: String) -> Bool {
        if let rest = Self.rest(of: topic, after: topics.prefix + "/") {
            for kind in DeviceTopic.allCases where Self.starts(rest, with: kind.rawValue) { return true }
            return writesTotals && Self.starts(rest, with: "occupancy")
        }
        guard let discovery, Self.rest(of: topic, after: discovery.prefix + "/") != nil else { return false }
        return topic.utf8.suffix(7).elementsEqual("/config".utf8)
    }

    /// Whether `rest` starts with the level `level` (followed by `/` or nothing).
    private static func starts(_ rest: Substring, with level: String) -> Bool {
        guard rest.utf8.starts(with: level.utf8) else { return false }
        let after = rest.utf8.dropFirst(level.utf8.count)
        return after.isEmpty || after.first == UInt8(ascii: "/")
    }

    /// `topic` after `head` when it starts with `head`'s bytes (as the broker compares
    /// topics: a Swift string comparison would take a canonically equivalent spelling,
    /// other bytes and so another topic, for the same).
    private static func rest(of topic: String, after head: String) -> Substring? {
        guard topic.utf8.starts(with: head.utf8) else { return nil }
        return Substring(topic.utf8.dropFirst(head.utf8.count))
    }

    /// Whether `a` and `b` are the same bytes.
    private static func same(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        a.utf8.elementsEqual(b.utf8)
    }

    /// What the retained message on `topic` with `payload` speaks for, when it is one of
    /// this bridge's own topics; nil for anything else (odd levels, identifiers the
    /// bridge would refuse, a config another program wrote). Only a discovery config's
    /// payload is read: for the topic its entity reads (`state_topic`, or the reset
    /// button's `command_topic`), which names the device or shared fence.
    package func read(topic: String, payload: [UInt8]) -> RetainedTopic? {
        if let subject = deviceSubject(topic) { return RetainedTopic(topic: topic, subject: subject) }
        if let subject = configSubject(topic, payload: payload) { return RetainedTopic(topic: topic, subject: subject) }
        return nil
    }

    /// Whether the fences in force (`book`) no longer account for `found`, so this
    /// instance clears it. `holdsState` says whether a device's state is kept (by its
    /// lane), which keeps its last values: asked only for device topics.
    package func isStale(_ found: RetainedTopic, book: FenceBook, holdsState: (String) -> Bool) -> Bool {
        switch found.subject {
        case .device(let kind, let device, let fence):
            guard owns(device) else { return false }
            guard kept.contains(kind) else { return true }
            guard book.knows(device) || holdsState(device) else { return true }
            guard let fence else { return false }
            return book.deviceFences(of: device).fence(fence) == nil
        case .occupancy(let owner, let fence):
            guard writesTotals else { return false }
            return book.shared[owner]?.fence(fence) == nil
        case .deviceEntity(let device, let fence):
            guard discovery != nil, owns(device) else { return false }
            guard book.knows(device) else { return true }
            guard let fence else { return false }
            return !book.deviceFences(of: device).announced(limit: announceLimit).contains { $0.identifier == fence }
        case .sharedEntity(let owner, let fence):
            guard discovery != nil, writesTotals else { return false }
            guard let set = book.shared[owner], set.fences.count <= announceLimit else { return true }
            return set.fence(fence) == nil
        }
    }

    /// The empty retained messages (QoS 1, as every removal) that clear those of `found`
    /// that `isStale` finds stale, in order.
    package func clearances(of found: [RetainedTopic], book: FenceBook, holdsState: (String) -> Bool) -> [OutboxMessage] {
        found.filter { isStale($0, book: book, holdsState: holdsState) }.map {
            OutboxMessage(topic: $0.topic, payload: [], qos: 1, retain: true)
        }
    }

    /// Whether this instance publishes (and so clears) the occupancy totals and the
    /// shared fences' entities: the only one, or instance 0 of several.
    private var writesTotals: Bool { (topics.shard?.index ?? 0) == 0 }

    /// Whether `device` is this instance's (every device for one instance).
    private func owns(_ device: String) -> Bool { topics.shard?.owns(device) ?? true }

    // MARK: Reading topics

    /// `<prefix>/<kind>/<device>` (`<prefix>/presence/<device>/<fence>`), or an
    /// occupancy total `<prefix>/occupancy/<owner>/<fence>`.
    private func deviceSubject(_ topic: String) -> RetainedTopic.Subject? {
        guard let rest = Self.rest(of: topic, after: topics.prefix + "/"), let slash = rest.utf8.firstIndex(of: UInt8(ascii: "/")) else {
            return nil
        }
        let level = rest[..<slash]
        let after = String(rest[rest.utf8.index(after: slash)...])
        if Self.same(level, "occupancy") {
            guard writesTotals, let (owner, fence) = Self.ownerAndFence(after) else { return nil }
            return .occupancy(owner: owner, fence: fence)
        }
        guard let kind = DeviceTopic.allCases.first(where: { Self.same(level, $0.rawValue) }) else { return nil }
        if kind == .presence {
            guard let (device, fence) = Self.deviceAndFence(after) else { return nil }
            return .device(.presence, device: device, fence: fence)
        }
        return Identifier.problem(device: after) == nil ? .device(kind, device: after, fence: nil) : nil
    }

    /// `<device>/<fence>`: the device may span levels, the fence is the last.
    private static func deviceAndFence(_ levels: String) -> (String, String)? {
        guard let slash = levels.utf8.lastIndex(of: UInt8(ascii: "/")) else { return nil }
        let device = String(levels[..<slash])
        let fence = String(levels[levels.utf8.index(after: slash)...])
        guard Identifier.problem(device: device) == nil, Identifier.problem(fence: fence) == nil else { return nil }
        return (device, fence)
    }

    /// `<owner>/<fence>`, both single levels.
    private static func ownerAndFence(_ levels: String) -> (String, String)? {
        let parts = TopicLevels.split(levels).map { String(Substring($0)) }
        guard parts.count == 2, Identifier.problem(fence: parts[0]) == nil, Identifier.problem(fence: parts[1]) == nil else {
            return nil
        }
        return (parts[0], parts[1])
    }

    /// The entities the bridge announces for a device or a shared fence, by component
    /// and object id (`HomeAssistantDiscovery`): the level of the topic their entity
    /// reads, or the start of their object id when a fence follows it.
    private enum Entity {
        case device(String)
        case presence
        case shared(String)
    }

    private static func entity(_ component: Substring, _ object: Substring) -> Entity? {
        if let entity = HomeAssistantDiscovery.deviceEntities.first(where: { same(component, $0.component) && same(object, $0.object) }) {
            return .device(entity.level)
        }
        return switch String(component) {
        case "binary_sensor" where object.utf8.starts(with: "presence_".utf8): .presence
        case "sensor" where object.utf8.starts(with: "occupancy_".utf8): .shared("occupancy_")
        case "binary_sensor" where object.utf8.starts(with: "occupied_".utf8): .shared("occupied_")
        default: nil
        }
    }

    /// `<discovery prefix>/<component>/<node>/<object>/config` of an entity this bridge
    /// announces for a device or a shared fence: the component and object are one of
    /// its entities', the payload names the topic that entity reads, and the node and
    /// object ids are those the bridge makes from it.
    private func configSubject(_ topic: String, payload: [UInt8]) -> RetainedTopic.Subject? {
        guard let discovery, let rest = Self.rest(of: topic, after: discovery.prefix + "/") else { return nil }
        let levels = TopicLevels.split(String(rest)).map { Substring($0) }
        guard levels.count == 4, Self.same(levels[3], "config"), let entity = Self.entity(levels[0], levels[2]) else { return nil }
        let (node, object) = (levels[1], levels[2])
        guard let source = Self.stringMember(Self.same(levels[0], "button") ? "command_topic" : "state_topic", in: payload) else {
            return nil
        }
        switch entity {
        case .device(let kind):
            guard let device = Self.rest(of: source, after: "\(topics.prefix)/\(kind)/").map(String.init),
                  Identifier.problem(device: device) == nil, Self.same(node, discovery.nodeID(of: device)) else { return nil }
            return .deviceEntity(device: device, fence: nil)
        case .presence:
            guard let levels = Self.rest(of: source, after: "\(topics.prefix)/presence/"),
                  let (device, fence) = Self.deviceAndFence(String(levels)),
                  Self.same(node, discovery.nodeID(of: device)), Self.same(object, HomeAssistantDiscovery.presenceObjectID(fence)) else {
                return nil
            }
            return .deviceEntity(device: device, fence: fence)
        case .shared(let start):
            guard let (owner, fence) = sharedFence(in: source), Self.same(node, discovery.sharedNodeID(of: owner)),
                  Self.same(object, start + HomeAssistantDiscovery.objectID(of: fence)) else { return nil }
            return .sharedEntity(owner: owner, fence: fence)
        }
    }

    /// The shared set and fence of the occupancy topic a shared fence's entities read
    /// (`PresenceMessages.occupancyTopic`: the total, or an instance's part when several
    /// share the devices).
    private func sharedFence(in topic: String) -> (String, String)? {
        if let levels = Self.rest(of: topic, after: "\(topics.prefix)/occupancy/") { return Self.ownerAndFence(String(levels)) }
        guard let part = topics.occupancyPart(topic),
              Self.same(topic, topics.occupancy(ofShard: part.shard, owner: part.owner, fence: part.fence)) else { return nil }
        return Self.ownerAndFence("\(part.owner)/\(part.fence)")
    }

    /// The value of the string member `key` of the JSON object in `payload`, found by
    /// its bytes (`"key":"value"`, as the bridge writes its configs); nil when it is not
    /// there, holds an escape, or `payload` is larger than any config of the bridge.
    static func stringMember(_ key: String, in payload: [UInt8]) -> String? {
        guard payload.count <= maximumConfigBytes else { return nil }
        let needle = Array("\"\(key)\":\"".utf8)
        guard let found = payload.indices.first(where: { payload[$0...].starts(with: needle) }) else { return nil }
        let start = found + needle.count
        guard let end = payload[start...].firstIndex(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }),
              payload[end] == UInt8(ascii: "\"") else { return nil }
        return String(decoding: payload[start..<end], as: UTF8.self)
    }

    /// Larger discovery configs are not the bridge's (one of its own is about a
    /// kilobyte, 2 KB with a long name and links), and are not searched.
    static let maximumConfigBytes = 8_192
}
