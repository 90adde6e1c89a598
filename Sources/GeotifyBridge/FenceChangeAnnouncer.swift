import GeotifyCore
import GeotifyStore

/// Tells subscribers what a change of the fences in force means, whoever made it (a
/// command's write on a lane, an edit of the file noticed by the bridge): removed
/// devices and fences lose their Home Assistant entities first and then every retained
/// topic (state, tracker, presence, badge, occupancy), new ones are announced, and
/// changed fences are pushed to OwnTracks apps when asked to.
///
/// When several instances share the devices, each speaks only for the devices it owns
/// (`Topics.shard`): their entities carry its availability, and no retained topic gets
/// two writers.
final class FenceChangeAnnouncer: Sendable {
    private let publisher: Publisher
    private let presence: PresenceMessages
    private let messages: OutboundMessages
    private let occupancy: Occupancy
    private let discovery: HomeAssistantDiscovery?
    private let waypoints: OwnTracksWaypoints?
    /// Shared sets with more fences are not announced fence by fence.
    private let announceLimit: Int

    init(
        publisher: Publisher, presence: PresenceMessages, messages: OutboundMessages, occupancy: Occupancy,
        discovery: HomeAssistantDiscovery?, waypoints: OwnTracksWaypoints?, announceLimit: Int
    ) {
        self.publisher = publisher
        self.presence = presence
        self.messages = messages
        self.occupancy = occupancy
        self.discovery = discovery
        self.waypoints = waypoints
        self.announceLimit = announceLimit
    }

    /// Publishes the Home Assistant discovery configs of every device in `book`.
    func announceAll(_ book: FenceBook) {
        guard let discovery else { return }
        publisher.send(discovery.configs(devices: owned(book.announcedFences(limit: announceLimit))))
    }

    /// Publishes what changed from `change.old` to `change.new`.
    func announce(_ change: LiveFenceBook.Change) {
        publisher.send(messages(for: change))
    }

    /// The messages for a change of book, in the order they must go out.
    func messages(for change: LiveFenceBook.Change) -> [OutboxMessage] {
        let before = owned(change.old.announcedFences(limit: announceLimit))
        let after = owned(change.new.announcedFences(limit: announceLimit))
        var outbox: [OutboxMessage] = []
        if let discovery { outbox += discovery.removals(previous: before, current: after) }
        outbox += presence.removals(previous: before, current: after)
        for device in before.keys.sorted() where after[device] == nil {
            outbox.append(OutboxMessage(topic: messages.topics.badge(device), payload: [], qos: 1, retain: true))
        }
        for key in occupancy.prune(to: change.new) {
            outbox.append(OutboxMessage(topic: presence.occupancyTopic(owner: key.owner, fence: key.fence), payload: [], qos: 1, retain: true))
        }
        if let discovery {
            outbox += discovery.configs(devices: after.filter { before[$0.key] != $0.value })
        }
        if let waypoints {
            for (device, fences) in owned(change.new.devices).sorted(by: { $0.key < $1.key }) where change.old.devices[device] != fences {
                let removed = change.old.fences(of: device).map(\.identifier).filter { id in !fences.contains { $0.identifier == id } }
                if let command = waypoints.command(for: device, fences: fences, removed: removed) { outbox.append(command) }
            }
        }
        return outbox
    }

    /// The entries of `devices` this instance owns: all of them unless several share them.
    private func owned(_ devices: [String: [Fence]]) -> [String: [Fence]] {
        guard let shard = messages.topics.shard else { return devices }
        return devices.filter { shard.owns($0.key) }
    }
}
