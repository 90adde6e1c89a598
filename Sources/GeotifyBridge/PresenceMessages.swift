import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Builds the retained messages that say where each device is, so a subscriber that
/// connects at any time (Home Assistant, a dashboard) learns the current presence at
/// once instead of waiting for the next transition:
///
/// | topic | payload |
/// |---|---|
/// | `geotify/state/<device>` | the device's state document, below |
/// | `geotify/presence/<device>/<fence>` | `inside` or `outside` |
/// | `geotify/tracker/<device>` | where the device is (`trackerState`): `home`, a fence's name, or `not_home`; also the state document's `tracker` |
/// | `geotify/occupancy/<owner>/<fence>` | how many devices are inside a shared fence, as decimal text |
///
/// All are retained, and meant to be published on every transition and badge change, not
/// on every fix. The device's own topics are last values at QoS 0 (`lastValue`: the lanes
/// publish them again after every connection); occupancy counts and removals (empty
/// payloads) are QoS 1, since nothing would repeat them. They are pure functions of
/// domain values, so the evaluation lane can build them next to the notifications and
/// commit them in the same outbox transaction.
package struct PresenceMessages: Sendable {
    package let topics: Topics

    /// The payload of a presence topic while the device is inside the fence.
    package static let inside = "inside"
    /// The payload of a presence topic while the device is outside the fence.
    package static let outside = "outside"
    /// The two payloads, made once and shared by every presence message (an array per
    /// message would be an allocation per message).
    private static let insidePayload = Array(inside.utf8)
    private static let outsidePayload = Array(outside.utf8)
    /// The payload of the tracker topic while the device is in none of its fences: Home
    /// Assistant's `not_home` state.
    package static let notHome = "not_home"
    /// The payload of the tracker topic while the device is in a home fence
    /// (`Fence.isHome`): Home Assistant's `home` state.
    package static let home = "home"

    package init(topics: Topics) {
        self.topics = topics
    }

    /// The state document of `device`: `geotify/state/<device>`.
    package func stateTopic(_ device: String) -> String { Topics.path(topics.prefix, "state", device) }
    /// `inside` / `outside` of `device` for `fence`: `geotify/presence/<device>/<fence>`.
    package func presenceTopic(_ device: String, fence: String) -> String { Topics.path(topics.prefix, "presence", device, fence) }
    /// The fence name or `not_home` of `device`: `geotify/tracker/<device>`.
    package func trackerTopic(_ device: String) -> String { Topics.path(topics.prefix, "tracker", device) }
    /// The number of devices inside the shared `fence` of `owner` (the group the fence
    /// belongs to): `geotify/occupancy/<owner>/<fence>`, or this instance's part of it
    /// when several share the devices (`Topics.occupancy`).
    package func occupancyTopic(owner: String, fence: String) -> String { topics.occupancy(owner: owner, fence: fence) }

    /// The state document of `device` on `geotify/state/<device>`:
    ///
    /// ```json
    /// {"device":"alice/phone","tracker":"home","inside":[{"fence":"home","name":"Home","note":"Welcome home"}],
    ///  "badge":1,"lat":52.52,"lon":13.405,"acc":12,"tst":1700000060,
    ///  "latitude":52.52,"longitude":13.405,"gps_accuracy":12}
    /// ```
    ///
    /// `tracker` is what `geotify/tracker/<device>` says (`trackerState`), so that one
    /// message carries the location and the position together: Home Assistant's tracker
    /// reads both from this document and changes once per transition, not twice.
    /// `inside` lists the fences of `fences` (the device's fences, in the order of the
    /// fence file) that `state` says the device is inside, each with its `name` when it
    /// has one. The last fix appears twice:
    /// as `lat`/`lon`/`acc`/`tst`, Geotify's own names, and as `latitude`/`longitude`/
    /// `gps_accuracy`, the attribute names from which Home Assistant's MQTT device
    /// tracker takes a position, since the discovered tracker reads this document as
    /// its `json_attributes_topic`. The fix keys are absent before the first fix;
    /// `acc` and `gps_accuracy` when the fix had no accuracy.
    /// (https://www.home-assistant.io/integrations/device_tracker.mqtt/)
    package func state(of device: String, _ state: DeviceState, fences: [Fence]) -> OutboxMessage {
        let inside = Self.fencesInside(state, fences: fences)
        var object = JSONObjectWriter()
        object.string("device", device)
        object.string("tracker", PresenceMessages.trackerState(inside.first))
        object.objects("inside", inside) { entry, fence in
            entry.string("fence", fence.identifier)
            if let name = fence.name { entry.string("name", name) }
            entry.string("note", fence.note)
        }
        object.number("badge", Double(state.badge))
        if let fix = state.lastFix {
            object.number("lat", fix.coordinate.latitude)
            object.number("lon", fix.coordinate.longitude)
            if let accuracy = fix.accuracy { object.number("acc", accuracy) }
            object.number("tst", fix.timestamp)
            object.number("latitude", fix.coordinate.latitude)
            object.number("longitude", fix.coordinate.longitude)
            if let accuracy = fix.accuracy { object.number("gps_accuracy", accuracy) }
        }
        return Self.lastValue(stateTopic(device), object.bytes())
    }

    /// `inside` or `outside` on `geotify/presence/<device>/<fence>`.
    package func presence(of device: String, fence: String, inside: Bool) -> OutboxMessage {
        Self.lastValue(presenceTopic(device, fence: fence), inside ? Self.insidePayload : Self.outsidePayload)
    }

    /// The fence the device tracker shows for `state`: the first of `fences`, in the
    /// order of the fence file, that the device is inside; nil when it is in none. The
    /// file's order is the priority, so a fence file lists specific fences (a room)
    /// before the fences around them (the building).
    package static func trackedFence(_ state: DeviceState, fences: [Fence]) -> Fence? {
        fencesInside(state, fences: fences).first
    }

    /// The fences of `fences` that `state` is inside, in their order. Most states are
    /// inside none: then no fence is looked up in them.
    static func fencesInside(_ state: DeviceState, fences: [Fence]) -> [Fence] {
        guard state.fences.contains(where: \.inside) else { return [] }
        return fences.filter { state.isInside($0.identifier) }
    }

    /// `trackerState` (what `trackerState(of:fences:)` says) on `geotify/tracker/<device>`,
    /// for subscribers that want the location alone (the state document's `tracker` says
    /// the same; Home Assistant reads that one). `LaneCore.showTracker` sends it when it
    /// changes.
    package func tracker(of device: String, showing trackerState: String) -> OutboxMessage {
        Self.lastValue(trackerTopic(device), Array(trackerState.utf8))
    }

    /// What the device tracker says for a device in `state`: the tracker state of its
    /// `trackedFence`.
    package static func trackerState(of state: DeviceState, fences: [Fence]) -> String {
        trackerState(trackedFence(state, fences: fences))
    }

    /// What the device tracker says for a device in `fence` (nil: in none), so that it
    /// matches Home Assistant's own zones: `home` for a home fence (`Fence.isHome`),
    /// which Home Assistant shows as Home; else the fence's `name`, which, equal to a
    /// zone's name, is the state Home Assistant gives a tracker in that zone; else the
    /// identifier; `not_home` when in no fence. (Home Assistant's tracker takes `home`
    /// and `not_home` from it, and its own zone for a fence:
    /// `HomeAssistantDiscovery.trackerTemplate`.)
    package static func trackerState(_ fence: Fence?) -> String {
        guard let fence else { return notHome }
        return fence.isHome ? home : fence.name ?? fence.identifier
    }

    /// The number of devices inside the shared `fence` of `owner`, as decimal text on
    /// `geotify/occupancy/<owner>/<fence>`: Home Assistant's zone state is this count.
    package func occupancy(owner: String, fence: String, count: Int) -> OutboxMessage {
        retained(occupancyTopic(owner: owner, fence: fence), Array(String(count).utf8))
    }

    /// The empty retained message that removes the presence of `device` for `fence` (QoS 1).
    package func presenceRemoval(of device: String, fence: String) -> OutboxMessage {
        retained(presenceTopic(device, fence: fence), [])
    }

    /// The empty retained message that removes the occupancy count of the shared `fence`
    /// of `owner`, a fence removed (QoS 1).
    package func occupancyRemoval(owner: String, fence: String) -> OutboxMessage {
        retained(occupancyTopic(owner: owner, fence: fence), [])
    }

    /// The messages that remove what is in `previous` but not in `current` (device →
    /// fences, and owner → shared fences for the occupancy entities), in the order Home
    /// Assistant must see them: first the empty discovery configs from `discovery`
    /// (none when it is nil), so no entity is still subscribed when its topics empty;
    /// then, per removed device (sorted), its retained state, tracker, the presence of
    /// each fence (file order) and badge; then the presence of each removed fence of a
    /// kept device. All are empty, retained, QoS 1. The occupancy counts of removed
    /// shared fences are the caller's to clear, after these.
    package func removals(
        previous: [String: [Fence]], current: [String: [Fence]], discovery: HomeAssistantDiscovery? = nil,
        previousShared: [String: [Fence]] = [:], currentShared: [String: [Fence]] = [:]
    ) -> [OutboxMessage] {
        var messages = discovery?.removals(
            previous: previous, current: current, previousShared: previousShared, currentShared: currentShared) ?? []
        for device in previous.keys.sorted() where current[device] == nil {
            messages += forgetting(device, fences: (previous[device] ?? []).map(\.identifier))
        }
        for device in previous.keys.sorted() {
            guard let kept = current[device].map({ Set($0.map(\.identifier)) }) else { continue }
            for fence in previous[device] ?? [] where !kept.contains(fence.identifier) {
                messages.append(presenceRemoval(of: device, fence: fence.identifier))
            }
        }
        return messages
    }

    /// The messages that remove the retained topics of `device`, which the bridge no
    /// longer knows (removed from the file, or an idle device evicted to make room): its
    /// state document, tracker, the presence of each of `fences` (identifiers) and its
    /// badge. Empty, retained, QoS 1.
    package func forgetting(_ device: String, fences: [String]) -> [OutboxMessage] {
        [DeviceTopic.state, .tracker, .presence, .badge].flatMap { topics(of: device, $0, fences: fences) }.map { retained($0, []) }
    }

    /// A retained message at QoS 1: occupancy counts and the removals of retained topics
    /// (an empty payload), which no later message would repeat.
    private func retained(_ topic: String, _ payload: [UInt8]) -> OutboxMessage {
        OutboxMessage(topic: topic, payload: payload, qos: 1, retain: true)
    }

    /// Empty retained messages, at QoS 0 as the last values, on the topics of `device` of
    /// each kind in `left` (topics `deviceTopics` leaves out): its state document, its
    /// badge, its tracker, and the presence of each of `fences`' own fences and of the
    /// fences of its shared sets of at most `announceLimit` (those a first fix announces).
    /// So what an earlier start that kept them left retained does not stay behind.
    package func clearances(of device: String, left: [DeviceTopic], fences: DeviceFences, announceLimit: Int) -> [OutboxMessage] {
        guard !left.isEmpty else { return [] }
        let announced = left.contains(.presence) ? fences.announced(limit: announceLimit) : []
        return left.flatMap { topics(of: device, $0, fences: announced.map(\.identifier)) }.map { Self.lastValue($0, []) }
    }

    /// The retained topics of `device` of one kind: its state document, tracker or badge
    /// topic, or the presence topic of each fence `fences` names.
    private func topics(of device: String, _ kind: DeviceTopic, fences: [String]) -> [String] {
        switch kind {
        case .state: [stateTopic(device)]
        case .tracker: [trackerTopic(device)]
        case .badge: [topics.badge(device)]
        case .presence: fences.map { presenceTopic(device, fence: $0) }
        }
    }

    /// A device's retained last value (state document, tracker, presence; the badge is
    /// `OutboundMessages.badge`) at QoS 0. A last value needs no acknowledgement: the
    /// lanes republish every device's from its committed state after each start and each
    /// connection to the broker (`LaneCore.republishAll`), so one lost with a connection
    /// or a crash is put right then, and each change is one message the broker takes
    /// without an acknowledgement to send back. See docs/reliability.md.
    static func lastValue(_ topic: String, _ payload: [UInt8]) -> OutboxMessage {
        OutboxMessage(topic: topic, payload: payload, qos: 0, retain: true)
    }
}
