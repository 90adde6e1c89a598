import Dispatch
import GeotifyMQTT
import GeotifyStore
import GeotifyTime
import Synchronization

/// At each start, reads which of the bridge's own retained topics the broker holds
/// (`RetainedSweep.filters`) and hands those that are the bridge's to `clear`, which
/// clears the stale ones (`RetainedSweep.isStale`, in the lanes and the announcer): what
/// fences and devices removed while the bridge was stopped left behind.
///
/// How it knows the broker has sent them all: a broker sends a subscription's retained
/// messages when it handles the SUBSCRIBE (mosquitto's `handle__subscribe` queues them,
/// `retain__queue`, before it sends the SUBACK), and delivers what one client is sent in
/// order. So
/// after the SUBACK of the last subscription (a topic of its own, `<prefix>/sweep/<token>`,
/// subscribed after the filters) the bridge publishes a marker there, not retained: its
/// arrival ends the retained burst. Then the filters are unsubscribed and a second marker
/// ends what was under way (the bridge's own messages echoed, which are dropped), and the
/// marker's topic is unsubscribed too. Each phase also ends after `phaseTimeout` seconds
/// on the injected clock, when a marker never comes (dropped by a broker whose queue for
/// the bridge was full, or the connection lost).
///
/// Bounded against a client that left millions of retained topics under the prefix: at
/// most `maximumTopics` are looked at (the collection ends there, and the rest are
/// counted in `sweepSkipped`), each of them read from its topic (a discovery config's
/// payload searched for one string), and only those the bridge could have written are
/// kept. Messages are taken on the network thread, which only adds them to a list; the
/// decisions run on the announcer's queue and the lanes'.
///
/// Every message under the filters, and every marker, is taken here while the sweep
/// runs (`isActive`), retained or not: none is routed as input.
final class RetainedCollection: Sendable {
    /// The most retained topics looked at in one start: about 100 bytes each (a few
    /// hundred for long identifiers) while the collection runs. A fleet with more (a
    /// presence topic per device and fence, seven discovery configs per device) is swept
    /// in part, and the rest are counted in `sweepSkipped`.
    static let maximumTopics = 50_000
    /// How long one phase waits for its marker, in seconds.
    static let phaseTimeout = 30.0

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
        /// Renewed by each phase (and each connection during one): a marker or timer of
        /// an earlier one is ignored.
        var generation = 0
        var markerSubscription: Int32?
        /// The message ids of the filters' subscriptions, by filter, until their SUBACKs.
        var subscriptions: [Int32: String] = [:]
        var found: [RetainedTopic] = []
        var seen: Set<String> = []
        var examined = 0
        var skipped = 0
        /// Whether the filters' unsubscription could not be sent (no connection): the
        /// drain starts again at the next connection rather than ending.
        var stillSubscribed = false
        var timer: ScheduledWork?
    }

    private let sweep: RetainedSweep
    /// `maximumTopics`, or fewer in a test.
    private let bound: Int
    private let client: MQTTClient
    /// Publishes a marker: through the bridge's `Publisher`, whose count of QoS 0
    /// messages not yet written each acknowledgement of one lowers.
    private let publish: @Sendable (OutboxMessage) -> Void
    private let scheduler: any Scheduler
    private let logger: Logger
    private let counters: Counters
    private let clear: @Sendable ([RetainedTopic]) -> Void
    /// `<prefix>/sweep/<token>`, this start's own.
    private let markerTopic: String
    private let active = Atomic<Bool>(true)
    private let state = Mutex(State())
    private let queue = DispatchQueue(label: "geotify.sweep")

    /// A collection for `sweep` over `client` (its subscriptions; its markers go through
    /// `publish`), looking at `bound` topics at most; `clear` gets what was found, once.
    init(
        sweep: RetainedSweep, bound: Int = RetainedCollection.maximumTopics, client: MQTTClient,
        publish: @escaping @Sendable (OutboxMessage) -> Void, scheduler: any Scheduler,
        logger: Logger, counters: Counters, clear: @escaping @Sendable ([RetainedTopic]) -> Void
    ) {
        self.sweep = sweep
        self.bound = bound
        self.client = client
        self.publish = publish
        self.scheduler = scheduler
        self.logger = logger
        self.counters = counters
        self.clear = clear
        markerTopic = "\(sweep.topics.prefix)/sweep/\(String(UInt64.random(in: 0...UInt64.max), radix: 16))"
    }

    /// Whether messages are still taken (`take`): one atomic load on the network thread.
    var isActive: Bool { active.load(ordering: .relaxed) }

    /// After each connection: starts (or starts again) the phase under way, since a lost
    /// connection may have lost its subscriptions' messages or its marker.
    func connected() {
        let phase = state.withLock { state -> Phase in
            state.generation += 1
            state.subscriptions = [:]
            state.markerSubscription = nil
            if state.phase == .waiting { state.phase = .collecting }
            return state.phase
        }
        switch phase {
        case .collecting:
            do {
                for filter in sweep.filters {
                    let id = try client.subscribe(filter, qos: 0)
                    state.withLock { $0.subscriptions[id] = filter }
                }
                let id = try client.subscribe(markerTopic, qos: 0)
                state.withLock { $0.markerSubscription = id }
            } catch {
                logger.warning("could not subscribe to read the retained topics to sweep: \(error)")
            }
            arm()
        case .draining:
            drain()
        case .waiting, .done:
            break
        }
    }

    /// The SUBACK of a subscription; says whether it was one of the sweep's. The marker's
    /// ends the subscriptions, and its marker is published. A filter the broker refuses
    /// (its access rules) is logged: nothing retained there is found, nor cleared.
    func subscribed(_ messageID: Int32, granted: [Int]) -> Bool {
        let refusal = granted.contains { $0 >= 128 }
        let (own, filter, generation) = state.withLock { state -> (Bool, String?, Int?) in
            if let filter = state.subscriptions.removeValue(forKey: messageID) { return (true, filter, nil) }
            guard state.markerSubscription == messageID else { return (false, nil, nil) }
            state.markerSubscription = nil
            return (true, nil, state.phase == .collecting ? state.generation : nil)
        }
        guard own else { return false }
        switch (refusal, filter, generation) {
        case (true, let filter?, _):
            logger.warning("the broker refused the subscription to \(filter) (its access rules): what is retained there is not swept for removed fences and devices")
        case (true, nil, _):
            logger.warning("the broker refused the subscription to \(markerTopic) (its access rules): the sweep of stale retained topics ends after \(Int(Self.phaseTimeout)) s, not at its marker")
        case (false, _, let generation?):
            publishMarker(generation)
        case (false, _, nil):
            break
        }
        return true
    }

    /// Takes `message` when it is the sweep's (see the type's description); false leaves it
    /// to be routed. On the network thread.
    func take(_ message: MQTTMessage) -> Bool {
        if message.topic.utf8.elementsEqual(markerTopic.utf8) {
            let generation = state.withLock { $0.generation }
            if message.payload.elementsEqual(String(generation).utf8) {
                queue.async { [self] in end(generation) }
            }
            return true
        }
        guard sweep.covers(message.topic) else { return false }
        guard message.retain else { return true }
        // Past the bound, and while draining, retained messages are the rest of the burst:
        // counted, not looked at.
        let (full, skipped) = state.withLock { state -> (Int?, Bool) in
            switch state.phase {
            case .collecting where state.examined < bound:
                state.examined += 1
                if let found = sweep.read(topic: message.topic, payload: message.payload), state.seen.insert(found.topic).inserted {
                    state.found.append(found)
                }
                return (state.examined == bound ? state.generation : nil, false)
            case .collecting, .draining:
                state.skipped += 1
                return (nil, true)
            case .waiting, .done:
                return (nil, false)
            }
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
            state.phase = .done
        }
        active.store(false, ordering: .relaxed)
        queue.sync {}
    }

    /// Ends the phase of `generation` (its marker came, the bound was reached, or its
    /// time ran out), on `queue`.
    private func end(_ generation: Int) {
        let ended = state.withLock { state -> (phase: Phase, found: [RetainedTopic], examined: Int, skipped: Int)? in
            guard state.generation == generation else { return nil }
            state.timer?.cancel()
            state.generation += 1
            let phase = state.phase
            switch phase {
            case .collecting: state.phase = .draining
            case .draining where !state.stillSubscribed: state.phase = .done
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
            logger.debug("read \(ended.examined) retained topics under the bridge's, \(ended.found.count) of them its own; clearing those the fences in force no longer account for")
            clear(ended.found)
            drain()
        case .draining:
            active.store(false, ordering: .relaxed)
            try? client.unsubscribe(markerTopic)
            if ended.skipped > 0 {
                logger.warning("the broker holds more than \(bound) retained topics under the bridge's; \(ended.skipped) were not looked at in this start's sweep of stale ones (sweep_skipped), and what is stale among them stays retained")
            }
        case .waiting, .done:
            break
        }
    }

    /// Unsubscribes from the filters and publishes the marker that ends what was on its way.
    private func drain() {
        let generation = state.withLock { $0.generation }
        do {
            for filter in sweep.filters { try client.unsubscribe(filter) }
            state.withLock { $0.stillSubscribed = false }
        } catch {
            state.withLock { $0.stillSubscribed = true }
            logger.warning("could not unsubscribe from the retained topics swept: \(error); trying again at the next connection")
        }
        arm()
        publishMarker(generation)
    }

    /// Publishes the marker of `generation`, not retained, at QoS 0.
    private func publishMarker(_ generation: Int) {
        publish(OutboxMessage(topic: markerTopic, payload: Array(String(generation).utf8), qos: 0, retain: false))
    }

    /// Ends the phase under way after `phaseTimeout` seconds unless its marker ends it first.
    private func arm() {
        state.withLock { state in
            state.timer?.cancel()
            let generation = state.generation
            state.timer = scheduler.schedule(after: Self.phaseTimeout, on: queue) { [weak self] in self?.end(generation) }
        }
    }
}
