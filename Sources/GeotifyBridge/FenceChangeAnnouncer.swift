import Dispatch
import GeotifyCore
import GeotifyStore
import Synchronization

/// Tells subscribers what a change of the fences in force means, whoever made it (a
/// command's write on a lane, an edit of the file noticed by the bridge): removed
/// devices and fences lose their Home Assistant entities first and then every retained
/// topic (state, tracker, presence, badge, occupancy), new ones are announced, and
/// changed fences are pushed to OwnTracks apps when asked to; the web console redraws.
///
/// When several instances share the devices, each speaks only for the devices it owns
/// (`Topics.shard`): their entities carry its availability, and no retained topic gets
/// two writers (shared fences' occupancy is added up by `ShardOccupancy`).
///
/// Announcements can be large (a Home Assistant config per entity of every device), so
/// they are built and handed over on a queue of their own, in order, as the publisher
/// has room (`Publisher.sendPatiently`): never on the network thread, which must go on
/// reading the acknowledgements that make the room.
final class FenceChangeAnnouncer: Sendable {
    private let queue: DispatchQueue
    private let publisher: Publisher
    private let presence: PresenceMessages
    private let occupancy: Occupancy
    private let discovery: HomeAssistantDiscovery?
    private let waypoints: OwnTracksWaypoints?
    /// Shared sets with more fences are not announced fence by fence.
    private let announceLimit: Int
    /// The web console's live updates.
    private let updates: LiveUpdates
    /// Announcements asked for and not yet handed to the publisher whole.
    private let unfinished = Atomic<Int>(0)
    /// The book of the whole announcement asked for and not yet begun (`announceAll`).
    private let wholeWaiting = Mutex<FenceBook?>(nil)

    /// `queue` is where announcements are built and handed over, one at a time, in order
    /// (a test holds it to see one waiting).
    init(
        publisher: Publisher, presence: PresenceMessages, occupancy: Occupancy,
        discovery: HomeAssistantDiscovery?, waypoints: OwnTracksWaypoints?, announceLimit: Int, updates: LiveUpdates,
        queue: DispatchQueue = DispatchQueue(label: "geotify.announcements")
    ) {
        self.queue = queue
        self.updates = updates
        self.publisher = publisher
        self.presence = presence
        self.occupancy = occupancy
        self.discovery = discovery
        self.waypoints = waypoints
        self.announceLimit = announceLimit
    }

    /// Publishes the Home Assistant discovery configs of the bridge, every device in
    /// `book` and its shared fences, and the occupancy of the announced shared fences
    /// (so an empty one says 0 rather than nothing). A whole announcement asked for while
    /// another waits to begin joins it, which then announces the newer book: Home
    /// Assistant's birth message repeated (or a client allowed to publish it flooding it)
    /// costs at most one whole announcement more than the one being sent, not one each
    /// (2 500 configs a birth in a fleet of a few hundred devices). A change announced
    /// between the two asks then follows the joined announcement and says again part of
    /// what it said, which changes nothing retained.
    func announceAll(_ book: FenceBook) {
        let joined = wholeWaiting.withLock { waiting -> Bool in
            defer { waiting = book }
            return waiting != nil
        }
        guard !joined else { return }
        enqueue { [self] in
            guard let book = wholeWaiting.withLock({ waiting -> FenceBook? in
                defer { waiting = nil }
                return waiting
            }) else { return }
            let shared = book.announcedSharedFences(limit: announceLimit)
            if let discovery {
                publisher.sendPatiently(discovery.announcement(devices: owned(book.announcedFences(limit: announceLimit)), shared: shared))
            }
            publishOccupancies(shared)
        }
    }

    /// Runs `work` on the announcements' queue after every announcement asked for so far:
    /// the sweep of stale retained topics at a start (`RetainedCollection`) clears Home
    /// Assistant configs in order with the announcements, with the book in force then.
    func afterAnnouncements(_ work: @escaping @Sendable () -> Void) {
        enqueue(work)
    }

    /// Waits until every announcement asked for so far is handed to the publisher.
    func waitUntilAnnounced() {
        queue.sync {}
    }

    /// Whether every announcement asked for so far is handed to the publisher, without
    /// waiting. An announcement (every Home Assistant config of the fence file: 240 000 in
    /// the e2e benchmark) may still be in the making, or waiting for room, while the
    /// publisher has, for a moment, nothing left to send.
    var isIdle: Bool { unfinished.load(ordering: .acquiring) == 0 }

    /// Runs `work` on the queue, counted in `unfinished` until it has returned.
    private func enqueue(_ work: @escaping @Sendable () -> Void) {
        unfinished.add(1, ordering: .relaxed)
        queue.async { [self] in
            work()
            unfinished.subtract(1, ordering: .releasing)
        }
    }

    /// Publishes the retained occupancy counts of the shared fences in `shared` (owner →
    /// fences). They are read and queued under the count's lock (`Occupancy.counts`), so
    /// they go out in order with the lanes' changes: a count read here is never published
    /// after a newer one a lane queued. With several instances each publishes its part,
    /// and only where it has devices inside (`ShardOccupancy` clears stale parts).
    private func publishOccupancies(_ shared: [String: [Fence]]) {
        let keys = shared.keys.sorted().flatMap { owner in
            (shared[owner] ?? []).map { Occupancy.Key(owner: owner, fence: $0.identifier) }
        }
        guard !keys.isEmpty else { return }
        let sharded = presence.topics.shard != nil
        occupancy.counts(of: keys) { counts in
            publisher.queue(zip(keys, counts).filter { !sharded || $0.1 > 0 }.map { key, count in
                presence.occupancy(owner: key.owner, fence: key.fence, count: count)
            })
        }
        publisher.pump()
    }

    /// Publishes what changed from `change.old` to `change.new`.
    func announce(_ change: LiveFenceBook.Change) {
        updates.send(.fencesChanged)
        enqueue { [self] in
            publisher.sendPatiently(messages(for: change))
            publishOccupancies(added(from: change))
        }
    }

    /// The messages for a change of book, in the order they must go out.
    func messages(for change: LiveFenceBook.Change) -> [OutboxMessage] {
        // Only the devices whose announced fences differ have anything to say. A command
        // changes one device's own fences and says which (`Change.devices`); looking at
        // every other device (their Home Assistant object ids above all), or comparing
        // every device's fences, on each write cost more than the write.
        let scope = change.devices ?? Self.devicesWithOwnChanges(change)
        var before = owned(change.old.announcedFences(limit: announceLimit, among: scope))
        var after = owned(change.new.announcedFences(limit: announceLimit, among: scope))
        for (device, fences) in after where before[device] == fences {
            before[device] = nil
            after[device] = nil
        }
        let sharedBefore = change.old.announcedSharedFences(limit: announceLimit)
        let sharedAfter = change.new.announcedSharedFences(limit: announceLimit)
        var outbox = presence.removals(
            previous: before, current: after, discovery: discovery, previousShared: sharedBefore, currentShared: sharedAfter)
        for key in removedOccupancies(change, previousShared: sharedBefore) {
            outbox.append(presence.occupancyRemoval(owner: key.owner, fence: key.fence))
        }
        if let discovery {
            // Only the configs that differ: each is a retained message of about a kilobyte,
            // and most changes (a new radius, a moved centre) leave every entity as it was.
            var previous: [String: [UInt8]] = [:]
            for config in discovery.configs(devices: before) { previous[config.topic] = config.payload }
            outbox += discovery.configs(devices: after).filter { previous[$0.topic] != $0.payload }
            for owner in sharedAfter.keys.sorted() where sharedBefore[owner] != sharedAfter[owner] {
                outbox += discovery.configs(owner: owner, fences: sharedAfter[owner] ?? [])
            }
        }
        if let waypoints {
            let devices = scope.map { scope in
                Dictionary(uniqueKeysWithValues: scope.compactMap { device in change.new.devices[device].map { (device, $0) } })
            } ?? change.new.devices
            for (device, fences) in owned(devices).sorted(by: { $0.key < $1.key }) where change.old.devices[device] != fences {
                let removed = change.old.fences(of: device).filter { old in !fences.contains { $0.identifier == old.identifier } }
                if let command = waypoints.command(for: device, fences: fences, removed: removed) { outbox.append(command) }
            }
        }
        return outbox
    }

    /// The shared fences whose occupancy counts go with `change` (sorted): those counted
    /// (`Occupancy.prune`, which forgets them) and those of `previousShared` (announced,
    /// so published at 0 when nobody was ever inside) that `change.new` no longer has.
    private func removedOccupancies(_ change: LiveFenceBook.Change, previousShared: [String: [Fence]]) -> [Occupancy.Key] {
        var removed = Set(occupancy.prune(to: change.new))
        for (owner, fences) in previousShared {
            for fence in fences where change.new.shared[owner]?.fence(fence.identifier) == nil {
                removed.insert(Occupancy.Key(owner: owner, fence: fence.identifier))
            }
        }
        return removed.sorted { ($0.owner, $0.fence) < ($1.owner, $1.fence) }
    }

    /// The announced shared sets of `change.new` with a fence `change.old` did not
    /// announce (owner → all its announced fences): their counts are published after the
    /// change's messages (`publishOccupancies`).
    private func added(from change: LiveFenceBook.Change) -> [String: [Fence]] {
        let sharedBefore = change.old.announcedSharedFences(limit: announceLimit)
        return change.new.announcedSharedFences(limit: announceLimit).filter { owner, fences in
            fences.contains { fence in sharedBefore[owner]?.contains { $0.identifier == fence.identifier } != true }
        }
    }

    /// The devices whose own fences differ between the two books, when that is all that
    /// differs (groups and shared sets the same), so only they can be announced
    /// differently; nil when groups or shared sets changed too.
    private static func devicesWithOwnChanges(_ change: LiveFenceBook.Change) -> Set<String>? {
        guard change.old.groups == change.new.groups, change.old.shared == change.new.shared else { return nil }
        var changed: Set<String> = []
        for (device, fences) in change.new.devices where change.old.devices[device] != fences { changed.insert(device) }
        for device in change.old.devices.keys where change.new.devices[device] == nil { changed.insert(device) }
        return changed
    }

    /// The devices of `devices` this instance owns (all of them without shards).
    private func owned(_ devices: [String: [Fence]]) -> [String: [Fence]] {
        guard let shard = presence.topics.shard else { return devices }
        return devices.filter { shard.owns($0.key) }
    }
}
