import Dispatch
import GeotifyConsole
import GeotifyJSON
import GeotifyCore
import GeotifyStore
import GeotifyTime
import Synchronization

/// A serial evaluation lane: the imperative shell around one `LaneCore`. It runs the core
/// on each batch routed to it, carries out what the core decided (fence writes, the
/// commit, publishing, logs, counters), and feeds the core clock ticks. Everything a
/// lane does runs on its dispatch queue, one thing at a time, so each device's messages
/// are handled in order and its state has one writer.
///
/// The network thread hands each burst of messages it read to the lane synchronously
/// (`handle`): `DispatchQueue.sync` runs the work on the calling thread, so a message
/// costs no thread hand-off and no wake-up, and the broker keeps whatever the bridge
/// has not read yet, unacknowledged, in the bridge's persistent session. Each batch's
/// state changes and the messages they cause are committed in one transaction, then
/// published: under load many small commits become few.
///
/// A QoS 1 message is acknowledged to the broker only after its batch is committed:
/// libmosquitto queues the PUBACK when it reads the message, and the network loop writes
/// it after the burst's end, when `handle` has returned. So a SIGKILL loses no position
/// the broker handed over (it sends the unacknowledged ones again); see
/// docs/reliability.md.
///
/// Thread safety (why `@unchecked Sendable` is sound): `core`, `latency` and the `unsaved*`
/// properties are only read and written on `queue` (asserted with
/// `dispatchPrecondition`); everything else is immutable or `Sendable`.
final class Lane: @unchecked Sendable {
    /// What all lanes share: the edges the shell talks to.
    struct Environment: Sendable {
        let store: StateStore
        let publisher: Publisher
        let counters: Counters
        let logger: Logger
        /// The fences in force and their file.
        let fences: LiveFenceBook
        /// How many devices are inside each shared fence, across lanes.
        let occupancy: Occupancy
        let presence: PresenceMessages
        /// Whether the state database can be written.
        let health: StateHealth
        /// Publishes what a change of fences means for subscribers.
        let announcer: FenceChangeAnnouncer
        let scheduler: any Scheduler
        let limits: FenceLimits
        /// Told when new deliveries are committed; nil without delivery targets.
        let wakeDeliveries: (@Sendable () -> Void)?
        /// The deliveries the lanes hold while their commits fail, within each
        /// target's bound on its deliveries waiting.
        let heldDeliveries: HeldDeliveries
        /// Told of the deliveries a commit did not queue, their target being full.
        let refuseDeliveries: @Sendable ([DeliveryRefusal]) -> Void
        /// Where devices' new states and notifications go for the web console.
        let updates: LiveUpdates

        /// Each target's bound on its deliveries waiting, by target name.
        var deliveryBounds: [String: DeliveryBound] { heldDeliveries.bounds }
    }

    private let queue: DispatchQueue
    private let environment: Environment
    private var core: LaneCore
    /// How long messages took from arrival to commit since the last report.
    private var latency = LatencyHistogram()
    /// States that could not be saved (a full disk): saved with the next batch that can be.
    private var unsaved: [String: DeviceState] = [:]
    /// Devices to forget whose deletion could not be saved yet.
    private var unsavedForgotten: Set<String> = []
    /// Deliveries that could not be queued yet, within their targets' bounds across
    /// the lanes (`HeldDeliveries`).
    private var unsavedDeliveries: [DeliveryEntry] = []
    /// How many deliveries each target refused meanwhile, for its count in the database
    /// (`geotify notify status`), added by the next commit that can be written.
    private var unsavedRefusals: [String: Int] = [:]
    /// Whether last fixes are still to be saved, a share at each tick (`tick`).
    private var savingFixes = false
    /// Requesters in the process waiting for an answer, by id.
    private var requesters: [Int: @Sendable (LaneAnswer.Outcome) -> Void] = [:]
    private var nextRequester = 0
    /// The latencies recorded before `latency` was last reset: with it, every one since
    /// the start, for `/metrics` (each message's latency is recorded once, in `latency`).
    private var earlierLatency = LatencyHistogram()

    init(index: Int, core: LaneCore, environment: Environment) {
        queue = DispatchQueue(label: "geotify.lane.\(index)")
        self.core = core
        self.environment = environment
    }

    /// Handles a batch of messages routed here, in order, and returns once it is
    /// committed and handed to the publisher (called on the network thread).
    func handle(_ batch: [Inbound]) {
        guard !batch.isEmpty else { return }
        queue.sync { process(batch) }
    }

    /// Handles the batches routed to several lanes at the end of a burst (called on the
    /// network thread), with one commit for all of them rather than one a lane: each lane
    /// decides its batch on its own queue, and with every one of those queues held, one
    /// transaction commits what they decided and queues their messages for publishing;
    /// then each lane carries out the rest. A commit's fixed cost (locks, the log's
    /// header and the pages every commit touches) is paid once a burst. Lanes hold
    /// different devices, so no device's messages change order. A batch in several
    /// parts (`LaneCore.parts`: commands that write fences in between) is handled by its
    /// lane alone, a commit a part as ever, so a reply never follows a later part's
    /// messages.
    static func handle(_ batches: [(lane: Lane, batch: [Inbound])]) {
        var together: [(lane: Lane, batch: [Inbound])] = []
        for (lane, batch) in batches where !batch.isEmpty {
            let parts = LaneCore.parts(of: batch)
            if parts.count > 1 {
                lane.queue.sync { lane.process(batch, parts: parts) }
            } else {
                together.append((lane, batch))
            }
        }
        guard !together.isEmpty else { return }
        decideHolding(together[...], decided: [])
    }

    /// Decides the first batch of `rest` on its lane's queue and goes on to the next
    /// with that queue held; with all held, commits and carries out what was decided.
    private static func decideHolding(_ rest: ArraySlice<(lane: Lane, batch: [Inbound])>, decided: [(lane: Lane, batch: [Inbound], effects: LaneEffects)]) {
        guard let (lane, batch) = rest.first else {
            let commits = decided.map { ($0.lane, $0.lane.prepare($0.effects)) }
            commit(commits, environment: decided[0].lane.environment)
            for (lane, batch, effects) in decided {
                lane.finish(effects)
                lane.recordLatency(of: batch)
            }
            return
        }
        lane.queue.sync {
            decideHolding(rest.dropFirst(), decided: decided + [(lane, batch, lane.decide(batch))])
        }
    }

    /// Handles one message for a requester in the process (the web console) on the lane's
    /// queue, then hands `answer` its outcome, once, from the lane's queue.
    func handle(_ inbound: Inbound, answer: @escaping @Sendable (LaneAnswer.Outcome) -> Void) {
        queue.async {
            self.nextRequester += 1
            var request = inbound
            request.requester = self.nextRequester
            self.requesters[self.nextRequester] = answer
            self.process([request])
        }
    }

    /// The devices of this lane as the web console shows them.
    func snapshots() -> [DeviceSnapshot] {
        queue.sync { core.devices.map { LaneCore.snapshot(of: $0.key, $0.value.state) } }
    }

    /// Every latency recorded since the start.
    func latencySinceStart() -> LatencyHistogram {
        queue.sync {
            var total = earlierLatency
            total.merge(latency)
            return total
        }
    }

    /// Advances the lane's clock: fires due dwell and minimum-duration timers, expires
    /// previews, republishes a share of the retained topics after a start, and saves a
    /// share of the last fixes kept only in memory, from a tick that `startSavingFixes`
    /// until all are saved.
    func tick(startSavingFixes: Bool) {
        queue.async {
            var effects = LaneEffects()
            self.core.tick(now: self.environment.scheduler.now, book: self.environment.fences.book, into: &effects)
            if self.savingFixes || startSavingFixes {
                self.savingFixes = self.core.saveFixes(into: &effects, limit: Self.fixesSavedPerTick)
            }
            self.carryOut(effects)
        }
    }

    /// Republishes every device's retained topics, a share at each tick (after a
    /// connection to the broker: `LaneCore.republishAll`).
    func republishAll() {
        queue.async { self.core.republishAll() }
    }

    /// Clears those of `found` (retained topics of this lane's devices found at the start)
    /// that `sweep` finds stale now, after what the lane decided before
    /// (`LaneCore.clearStale`).
    func clearStale(_ found: [RetainedTopic], sweep: RetainedSweep) {
        queue.async {
            var effects = LaneEffects()
            self.core.clearStale(found, sweep: sweep, book: self.environment.fences.book, into: &effects)
            self.carryOut(effects)
        }
    }

    /// The most last fixes saved at a tick: with thousands of devices moving, saving them
    /// all at once held the lane (and so the network thread, which hands it bursts) for
    /// well over 100 ms every five seconds; a share at each tick keeps every stall short.
    static let fixesSavedPerTick = 64

    /// Saves every last fix that was only kept in memory, in one go (at stop).
    func saveAllFixes() {
        queue.async {
            var effects = LaneEffects()
            self.savingFixes = self.core.saveFixes(into: &effects)
            self.carryOut(effects)
        }
    }

    /// The number of devices with state, and the arrival-to-commit latencies since the
    /// last call that was `resetting`.
    func statistics(resetting: Bool = true) -> (devices: Int, latency: LatencyHistogram) {
        queue.sync {
            defer {
                if resetting {
                    earlierLatency.merge(latency)
                    latency = LatencyHistogram()
                }
            }
            return (core.deviceCount, latency)
        }
    }

    /// The state of `device` as the lane has it now.
    func state(of device: String) -> DeviceState? {
        queue.sync { core.state(of: device) }
    }

    /// Blocks until what was queued on the lane so far (ticks, saves) is done.
    func waitUntilIdle() {
        queue.sync {}
    }

    /// Runs the core on `batch` part by part (`parts`, else `LaneCore.parts(of:)`),
    /// carrying out each part's decisions before the next part, then records the batch's
    /// latencies.
    private func process(_ batch: [Inbound], parts: [Range<Int>]? = nil) {
        dispatchPrecondition(condition: .onQueue(queue))
        let parts = parts ?? LaneCore.parts(of: batch)
        for part in parts {
            carryOut(decide(parts.count == 1 ? batch : Array(batch[part])))
        }
        recordLatency(of: batch)
    }

    /// Records how long each message of `batch` took from its arrival to now, when it
    /// is committed.
    private func recordLatency(of batch: [Inbound]) {
        dispatchPrecondition(condition: .onQueue(queue))
        let committed = environment.scheduler.now
        for inbound in batch {
            let duration = max(0, committed - inbound.arrival)
            latency.record(duration)
        }
    }

    /// Runs the core on one part of a batch, writes the fence changes it asked for and
    /// lets the core answer them; returns what is left to carry out.
    private func decide(_ batch: [Inbound]) -> LaneEffects {
        dispatchPrecondition(condition: .onQueue(queue))
        var effects = LaneEffects()
        core.handle(batch, book: environment.fences.book, into: &effects)
        if !effects.fenceWrites.isEmpty {
            let writes = effects.fenceWrites
            effects.fenceWrites = []
            let started = environment.scheduler.uptime
            let (results, change) = environment.fences.write(writes, limits: environment.limits)
            let took = environment.scheduler.uptime - started
            if let change { environment.announcer.announce(change) }
            core.finish(writes, results: results, book: environment.fences.book, took: took, at: batch[0].arrival, into: &effects)
        }
        return effects
    }

    /// Carries out what the core decided: counters and log lines, then the commit of
    /// states with the messages they cause, then publishing them, the shared fences' new
    /// occupancy counts after them (`publishOccupancy`).
    private func carryOut(_ effects: LaneEffects) {
        Lane.commit([(self, prepare(effects))], environment: environment)
        finish(effects)
    }

    /// What a lane asks to commit: its states (with those an earlier commit could not
    /// save), the devices it forgets, its deliveries and its outbox messages.
    private struct Commit {
        var saves: [String: DeviceState]
        var forgotten: Set<String>
        var deliveries: [DeliveryEntry]
        /// Deliveries refused by target while no commit could be written.
        var refusedBefore: [String: Int]
        var outbox: [OutboxMessage]

        var isEmpty: Bool { saves.isEmpty && forgotten.isEmpty && deliveries.isEmpty && refusedBefore.isEmpty && outbox.isEmpty }
    }

    /// Counts and logs what the core decided, and gathers what is to be committed. A
    /// device forgotten and given a new state in the same effects (removed from the file,
    /// then a position of it in the same batch) is both deleted and saved: the store
    /// deletes first, so the new state is kept.
    private func prepare(_ effects: LaneEffects) -> Commit {
        dispatchPrecondition(condition: .onQueue(queue))
        environment.counters.add(effects.counters)
        for entry in effects.log { environment.logger.log(entry.level, entry.message) }
        let forgotten = unsavedForgotten.union(effects.forgotten)
        var saves = unsaved
        for device in forgotten { saves[device] = nil }
        for (device, state) in effects.saves { saves[device] = state }
        return Commit(
            saves: saves, forgotten: forgotten, deliveries: unsavedDeliveries + effects.deliveries, refusedBefore: unsavedRefusals,
            outbox: effects.outbox)
    }

    /// Commits what `commits` gathered in one transaction and queues the outbox messages
    /// for publishing in that order (called with each lane's queue held). When the store
    /// cannot be written (a full or failing disk) the messages are still published, behind
    /// the persisted ones decided before them (`Publisher.sendUnpersisted`): the
    /// bridge keeps working, reports the failure once on `geotify/error`, each lane keeps
    /// its unsaved states to save with its next commit, and the bridge reports when
    /// writes work again.
    private static func commit(_ commits: [(lane: Lane, commit: Commit)], environment: Environment) {
        let commits = commits.filter { !$0.commit.isEmpty }
        guard !commits.isEmpty else { return }
        var saves: [(device: String, state: DeviceState, named: Bool)] = []
        var forgotten: [String] = []
        var deliveries: [DeliveryEntry] = []
        var refusedBefore: [String: Int] = [:]
        var outbox: [OutboxMessage] = []
        for (lane, commit) in commits {
            dispatchPrecondition(condition: .onQueue(lane.queue))
            saves += lane.core.rows(saving: commit.saves)
            forgotten += commit.forgotten
            deliveries += commit.deliveries
            refusedBefore.merge(commit.refusedBefore, uniquingKeysWith: +)
            outbox += commit.outbox
        }
        var refusals: [DeliveryRefusal] = []
        do {
            try environment.store.save(
                devices: saves, forgetting: forgotten, outbox: outbox, deliveries: deliveries, bounds: environment.deliveryBounds,
                refusedBefore: refusedBefore, now: environment.scheduler.now,
                then: { ids in environment.publisher.queue(outbox, outboxIDs: ids) }, refused: { refusals = $0 })
            environment.publisher.pump()
            for (lane, _) in commits {
                lane.unsaved.removeAll()
                lane.unsavedForgotten.removeAll()
                environment.heldDeliveries.release(lane.unsavedDeliveries)
                lane.unsavedDeliveries.removeAll()
                lane.unsavedRefusals.removeAll()
            }
            environment.health.succeeded()
            if !refusals.isEmpty { environment.refuseDeliveries(refusals) }
            if deliveries.count > refusals.count { environment.wakeDeliveries?() }
        } catch {
            // What the store refused went with its transaction.
            refusals = []
            for (lane, commit) in commits {
                lane.unsaved = commit.saves
                lane.unsavedForgotten = commit.forgotten
                // Held within the targets' bounds, across the lanes: an outage's
                // notifications would otherwise pile up here without end.
                let deliveries = environment.heldDeliveries.hold(commit.deliveries, replacing: lane.unsavedDeliveries)
                lane.unsavedDeliveries = deliveries.held
                lane.unsavedRefusals = commit.refusedBefore
                for refusal in deliveries.refused { lane.unsavedRefusals[refusal.entry.target, default: 0] += 1 }
                refusals += deliveries.refused
            }
            environment.health.failed("device state", error) { environment.publisher.send($0) }
            environment.publisher.sendUnpersisted(outbox)
            if !refusals.isEmpty { environment.refuseDeliveries(refusals) }
        }
    }

    /// Carries out what follows the commit: the shared fences' new counts, the messages
    /// that are not persisted, the answers to requesters in the process and the web
    /// console's updates.
    private func finish(_ effects: LaneEffects) {
        dispatchPrecondition(condition: .onQueue(queue))
        publishOccupancy(effects.occupancy)
        environment.publisher.send(effects.direct)
        for answer in effects.answers {
            requesters.removeValue(forKey: answer.requester)?(answer.outcome)
        }
        if environment.updates.isWatched {
            report(effects)
        }
    }

    /// Counts the shared fences' changes and queues the new counts, retained, after the
    /// commit's messages. They are not persisted: a start counts the persisted states
    /// and announces every count on connecting (`FenceChangeAnnouncer.announceAll`). They
    /// are queued under the count's lock (`Occupancy.apply`), so an announcement that
    /// reads the counts meanwhile is published in order with them and cannot leave an
    /// older count retained. The count of a fence removed from its set is emptied when its
    /// last device leaves it (`OccupancyChange.fenceRemoved`).
    private func publishOccupancy(_ changes: [OccupancyChange]) {
        guard !changes.isEmpty else { return }
        let presence = environment.presence
        let publisher = environment.publisher
        environment.occupancy.apply(changes) { counts in
            publisher.queue(counts.map { key, count in
                count.map { presence.occupancy(owner: key.owner, fence: key.fence, count: $0) }
                    ?? presence.occupancyRemoval(owner: key.owner, fence: key.fence)
            })
        }
        publisher.pump()
    }

    /// Tells the web console what changed: each device's new state once, or that it was
    /// forgotten (`LaneCore.liveUpdates(of:)`), and the notifications in the order they
    /// are published.
    private func report(_ effects: LaneEffects) {
        for update in core.liveUpdates(of: effects.observed) {
            environment.updates.send(update)
        }
        for message in effects.outbox where message.topic.hasPrefix(environment.presence.topics.prefix + "/event/") {
            if let json = try? JSONParser().parse(message.payload) { environment.updates.send(.notification(json)) }
        }
    }
}
