import Dispatch
import GeotifyMQTT
import GeotifyStore
import GeotifyTime
import Synchronization

/// At each start, reads which of the bridge's own retained topics the broker holds
/// (`RetainedSweep.filters`) and hands those that look stale to `clear`, which clears
/// the stale ones (`RetainedSweep.isStale`, in the lanes and the announcer): what fences
/// and devices removed while the bridge was stopped left behind.
///
/// How it knows the broker has sent them all: a broker sends a subscription's retained
/// messages when it handles the SUBSCRIBE, in order with what else it sends the bridge;
/// mosquitto 2.0.11 writes that subscription's SUBACK first and them right after it (as
/// seen on the wire). So once every filter's SUBACK came, what the earlier filters hold
/// has come and the last one's is coming; the collection waits until `settle` seconds
/// pass on the injected clock with none more, then ends. The filters are then
/// unsubscribed, and what comes under them until the last UNSUBACK (the bridge's own
/// messages echoed, and nothing after it) is dropped. Each phase also ends after
/// `phaseTimeout` seconds when its acknowledgements never come (the connection lost: a
/// new one starts the phase again). Nothing is published for it, so subscribers to the
/// bridge's topics see nothing of it.
///
/// Each retained message is read as it comes, from its topic (a discovery config's
/// payload searched for one string), and kept only when it is one the bridge could have
/// written and `stale` finds it stale: the fences in force and the devices whose state
/// the start keeps no longer account for it. The rest (the topics the bridge still owns,
/// other instances' and other programs') is dropped at once, so however many there are
/// they neither fill memory nor hide the stale ones behind them. Only what is kept counts
/// toward the bound: at most `maximumStale` topics in a start, against a client that
/// left millions of them under the prefix (the collection ends there, and the stale
/// ones that come after are counted in `sweepSkipped`). Those kept are cleared, so the
/// next start meets the next ones: a start clears up to `maximumStale` stale topics,
/// however many the bridge owns besides. `stale` is only a first look, on the network thread;
/// the lanes and the announcer decide again with the fences and states in force when
/// they clear (a device may have sent its first position meanwhile), and a topic that
/// becomes stale after its look is cleared by the removal that made it so
/// (`FenceChangeAnnouncer`, `LaneCore.leaveRemovedFences`), or by the next start. The
/// network thread reads each message and adds those kept to a list; the collection ends
/// at `phaseTimeout` in any case, however many messages keep coming.
///
/// Every message under the filters is taken here while the sweep runs (`isActive`),
/// retained or not: none is routed as input.
final class RetainedCollection: Sendable {
    /// The most stale topics kept in one start: about 100 bytes each (a few hundred for
    /// long identifiers) while the collection runs. More are left to the next start (and
    /// counted in `sweepSkipped`), which meets them once these are cleared.
    static let maximumStale = 50_000
    /// How long one phase waits for its acknowledgements, in seconds.
    static let phaseTimeout = 30.0
    /// How long, after every filter's SUBACK, no retained message must come for the
    /// collection to end, in seconds.
    static let settle = 0.2

    private enum Phase {
        /// Waiting for the first connection.
        case waiting
        /// Subscribed to the filters, taking the retained messages.
        case collecting
        /// Unsubscribed from the filters, dropping what was already on its way.
        case draining
        case done
    }

    private struct State {
        var phase = Phase.waiting
        /// Renewed by each phase (and each connection during one): a timer or an
        /// acknowledgement of an earlier one is ignored.
        var generation = 0
        /// The message ids of the filters' subscriptions, by filter, until their SUBACKs.
        var subscriptions: [Int32: String] = [:]
        /// The message ids of the filters' unsubscriptions, until their UNSUBACKs.
        var unsubscriptions: Set<Int32> = []
        /// What looks stale (`stale`), in the order it came; `seen` holds their topics.
        var found: [RetainedTopic] = []
        var seen: Set<String> = []
        /// The retained messages the collection has read.
        var examined = 0
        /// The topics that looked stale past the bound, or while draining.
        var skipped = 0
        /// The first look at whether a topic is stale, until the sweep is done (it holds
        /// the devices whose state the start keeps).
        var stale: (@Sendable (RetainedTopic) -> Bool)?
        /// Whether the filters' unsubscription could not be sent (no connection): the
        /// drain starts again at the next connection rather than ending.
        var stillSubscribed = false
        /// The phase's timeout.
        var timer: ScheduledWork?
        /// The collection's next look at whether retained messages stopped coming.
        var settling: ScheduledWork?
    }

    private let sweep: RetainedSweep
    /// `maximumStale`, or fewer in a test.
    private let bound: Int
    private let client: any SubscriptionRequests
    private let scheduler: any Scheduler
    private let logger: Logger
    private let counters: Counters
    private let clear: @Sendable ([RetainedTopic]) -> Void
    private let active = Atomic<Bool>(true)
    /// Set once `clear` has been given what was found (`hasCollected`).
    private let collected = Atomic<Bool>(false)
    private let state: Mutex<State>
    private let queue = DispatchQueue(label: "geotify.sweep")

    /// A collection for `sweep` over `client`, keeping `bound` topics at most of those
    /// `stale` finds stale; `clear` gets them, once.
    init(
        sweep: RetainedSweep, bound: Int = RetainedCollection.maximumStale, client: any SubscriptionRequests, scheduler: any Scheduler,
        logger: Logger, counters: Counters, stale: @escaping @Sendable (RetainedTopic) -> Bool,
        clear: @escaping @Sendable ([RetainedTopic]) -> Void
    ) {
        self.sweep = sweep
        self.bound = bound
        self.client = client
        self.scheduler = scheduler
        self.logger = logger
        self.counters = counters
        self.clear = clear
        state = Mutex(State(stale: stale))
    }

    /// Whether messages are still taken (`take`): one atomic load on the network thread.
    var isActive: Bool { active.load(ordering: .relaxed) }

    /// Whether the collection has ended and `clear` has been given what it found.
    var hasCollected: Bool { collected.load(ordering: .acquiring) }

    /// After each connection: starts (or starts again) the phase under way, since a lost
    /// connection may have lost its subscriptions' messages or acknowledgements.
    func connected() {
        let phase = state.withLock { state -> Phase in
            state.generation += 1
            state.subscriptions = [:]
            state.unsubscriptions = []
            if state.phase == .waiting { state.phase = .collecting }
            return state.phase
        }
        switch phase {
        case .collecting:
            arm(after: Self.phaseTimeout)
            // Every id is recorded under the lock the acknowledgements take, all of them
            // before any acknowledgement is looked at: one cannot be read before its id is
            // known, and the first filter's SUBACK, come before the last filter was sent,
            // must not find the list empty and start the settle while later filters'
            // retained messages are still to come.
            do {
                try state.withLock { state throws(MQTTError) in
                    for filter in sweep.filters { state.subscriptions[try client.subscribe(filter, qos: 0)] = filter }
                }
            } catch {
                logger.warning("could not subscribe to read the retained topics to sweep: \(error)")
            }
        case .draining:
            drain()
        case .waiting, .done:
            break
        }
    }

    /// The SUBACK of a subscription; says whether it was one of the sweep's. After the
    /// last one, refused or not, the collection ends once `settle` seconds pass with no
    /// retained message. A filter the broker refuses (its access rules: 0x80, or an MQTT
    /// 5 reason code from 0x80 up) is logged and counted in `sweepRefused`: nothing
    /// retained there is found, nor cleared.
    func subscribed(_ messageID: Int32, granted: [Int]) -> Bool {
        let (filter, last) = state.withLock { state -> (String?, Bool) in
            guard let filter = state.subscriptions.removeValue(forKey: messageID) else { return (nil, false) }
            return (filter, state.phase == .collecting && state.subscriptions.isEmpty)
        }
        guard let filter else { return false }
        if granted.contains(where: { $0 >= 128 }) {
            counters.add(.sweepRefused)
            logger.warning("the broker refused the subscription to \(filter) (its access rules; sweep_refused): what is retained there is not swept for removed fences and devices")
        }
        if last { settle() }
        return true
    }

    /// The UNSUBACK of an unsubscription; says whether it was one of the sweep's. After
    /// the last one nothing more comes under the filters, and the sweep ends.
    func unsubscribed(_ messageID: Int32) -> Bool {
        let (own, generation) = state.withLock { state -> (Bool, Int?) in
            guard state.unsubscriptions.remove(messageID) != nil else { return (false, nil) }
            return (true, state.phase == .draining && state.unsubscriptions.isEmpty ? state.generation : nil)
        }
        if let generation { queue.async { [self] in end(generation) } }
        return own
    }

    /// Takes `message` when it is the sweep's (see the type's description); false leaves it
    /// to be routed. On the network thread.
    func take(_ message: MQTTMessage) -> Bool {
        guard sweep.covers(message.topic) else { return false }
        guard message.retain else { return true }
        // What looks stale is kept up to the bound; past it, and while draining (the rest
        // of the burst), it is counted.
        let (full, skipped) = state.withLock { state -> (Int?, Bool) in
            guard state.phase == .collecting || state.phase == .draining, let stale = state.stale else { return (nil, false) }
            if state.phase == .collecting { state.examined += 1 }
            guard let found = sweep.read(topic: message.topic, payload: message.payload), !state.seen.contains(found.topic),
                  stale(found) else { return (nil, false) }
            guard state.phase == .collecting, state.found.count < bound else {
                state.skipped += 1
                return (nil, true)
            }
            state.seen.insert(found.topic)
            state.found.append(found)
            return (state.found.count == bound ? state.generation : nil, false)
        }
        if skipped { counters.add(.sweepSkipped) }
        if let full { queue.async { [self] in end(full) } }
        return true
    }

    /// Ends the sweep where it stands (the bridge stops): no more messages are taken, the
    /// timer is cancelled, and an end under way has handed what it found to `clear`
    /// when this returns.
    func stop() {
        state.withLock { state in
            state.timer?.cancel()
            state.settling?.cancel()
            state.phase = .done
            state.stale = nil
        }
        active.store(false, ordering: .relaxed)
        finishQueuedWork()
    }

    /// Returns once the work queued for the collection's own queue has run: an end that an
    /// acknowledgement or the bound brought about has then happened.
    func finishQueuedWork() {
        queue.sync {}
    }

    /// Ends the phase of `generation` (its acknowledgements came and the retained
    /// messages settled, the bound was reached, or its time ran out), on `queue`.
    private func end(_ generation: Int) {
        let ended = state.withLock { state -> (phase: Phase, found: [RetainedTopic], examined: Int, skipped: Int)? in
            guard state.generation == generation else { return nil }
            state.timer?.cancel()
            state.settling?.cancel()
            state.generation += 1
            let phase = state.phase
            switch phase {
            case .collecting: state.phase = .draining
            case .draining where !state.stillSubscribed:
                state.phase = .done
                state.stale = nil
            case .draining, .waiting, .done: return nil
            }
            defer {
                state.found = []
                state.seen = []
            }
            return (phase, state.found, state.examined, state.skipped)
        }
        guard let ended else { return }
        switch ended.phase {
        case .collecting:
            logger.debug("read \(ended.examined) retained topics under the bridge's, \(ended.found.count) of them its own and stale; clearing those the fences in force no longer account for")
            clear(ended.found)
            collected.store(true, ordering: .releasing)
            drain()
        case .draining:
            active.store(false, ordering: .relaxed)
            if ended.skipped > 0 {
                logger.warning("\(ended.skipped) more stale retained topics under the bridge's came after this start's sweep had taken what it clears (\(bound) at most, or what came within \(Int(Self.phaseTimeout)) s); they stay retained until a later start's sweep (sweep_skipped)")
            }
        case .waiting, .done:
            break
        }
    }

    /// Unsubscribes from the filters; the last UNSUBACK ends the sweep.
    private func drain() {
        arm(after: Self.phaseTimeout)
        // All the ids under one hold of the lock the UNSUBACKs take: the first filter's,
        // come before the last filter was sent, found the list empty and ended the sweep
        // while the later filters were still subscribed, and what came under them until
        // their UNSUBACKs (the bridge's own clearances and announcements echoed) was
        // routed as input and counted unrouted (1 run in 12 of the sweep's start test under
        // load).
        do {
            try state.withLock { state throws(MQTTError) in
                for filter in sweep.filters { state.unsubscriptions.insert(try client.unsubscribe(filter)) }
                state.stillSubscribed = false
            }
        } catch {
            state.withLock { $0.stillSubscribed = true }
            logger.warning("could not unsubscribe from the retained topics swept: \(error); trying again at the next connection")
        }
    }

    /// Ends the collection `settle` seconds from now unless a retained message came
    /// meanwhile, then looks again `settle` seconds later, and so on; the phase's timeout
    /// ends it in any case.
    private func settle() {
        state.withLock { current in
            let (generation, examined, skipped) = (current.generation, current.examined, current.skipped)
            current.settling?.cancel()
            current.settling = scheduler.schedule(after: Self.settle, on: queue) { [weak self] in
                guard let self else { return }
                let (same, quiet) = state.withLock { now in
                    (now.generation == generation, now.generation == generation && now.examined == examined && now.skipped == skipped)
                }
                if quiet { end(generation) } else if same { settle() }
            }
        }
    }

    /// Ends the phase under way after `delay` seconds unless its acknowledgements end it
    /// first.
    private func arm(after delay: Double) {
        state.withLock { state in
            state.timer?.cancel()
            let generation = state.generation
            state.timer = scheduler.schedule(after: delay, on: queue) { [weak self] in self?.end(generation) }
        }
    }
}
