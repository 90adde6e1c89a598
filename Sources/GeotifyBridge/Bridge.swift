import Dispatch
import Foundation
import GeotifyConsole
import GeotifyCore
import GeotifyDelivery
import GeotifyMQTT
import GeotifyHTTP
import GeotifyStore
import GeotifyTime
import Synchronization

/// The running bridge: subscribes to positions and commands, routes each message to its
/// device's lane, and publishes notifications, badges, presence, occupancy, Home
/// Assistant discovery, statistics, status and errors.
///
/// It is the outermost imperative shell: the broker, the fence file, the state
/// directory and the clock (a `Scheduler`, injected) are all at its edges. The decisions
/// are made by each lane's `LaneCore`; the bridge only routes, keeps time and reports.
package final class Bridge: Sendable {
    package let settings: Settings
    package let counters = Counters()
    private let logger: Logger
    private let scheduler: any Scheduler
    /// The most stale topics the start's sweep keeps (`RetainedCollection`).
    private let sweepBound: Int
    private let topics: Topics
    private let messages: OutboundMessages
    private let presence: PresenceMessages
    private let discovery: HomeAssistantDiscovery?
    private let occupancy = Occupancy()
    /// What the lanes report for the web console.
    private let updates = LiveUpdates()
    /// The occupancy parts of several instances that share the devices.
    private let shardOccupancy: ShardOccupancy
    private let health: StateHealth
    private let publisher: Publisher
    private let running = Mutex<Running?>(nil)
    /// Serialises `start` and `stop`.
    private let phase = Mutex(())
    /// Whether a stop has decided the last status (`offline`, or nothing while not
    /// connected). `online` is queued only while it is false, and the stop's `offline`
    /// is queued in the same critical section that sets it, so a connection accepted
    /// while the bridge stops can never publish `online` after (or instead of) it.
    private let statusClosed = Mutex(false)
    /// Whether the broker refused the current attempt (`.connectionRefused`): the
    /// `.disconnected` that follows is not logged again.
    private let refusedAttempt = Atomic<Bool>(false)
    /// The filters of the inputs subscribed to on the current connection, by the message
    /// id of their SUBSCRIBE, until the broker answers: a refusal names its filter.
    private let inputSubscriptions = Mutex<[Int32: String]>([:])

    /// What exists only while the bridge runs.
    private struct Running: Sendable {
        let client: MQTTClient
        /// The state directory, this process's alone until the stop.
        let lock: StateDirectoryLock
        let store: StateStore
        let fences: LiveFenceBook
        let announcer: FenceChangeAnnouncer
        /// What each message from the broker needs, behind one reference.
        let routing: Routing
        var lanes: [Lane] { routing.lanes }
        /// The housekeeping's rounds, and the timer that runs them.
        let housekeeper: Housekeeper
        let housekeeping: ScheduledWork
        /// Delivers notifications to targets; nil when none is configured.
        let deliveries: DeliveryWorker?
        /// The web console and the address it is bound to; nil without an `http` section
        /// in the settings.
        var console: (server: Console, address: ListenAddress)?
        /// When it started, on the monotonic clock.
        let started: Double
        var stopping = false
        /// Whether the broker has accepted a connection since the start.
        var connectedOnce = false
    }

    /// The router and the lanes, in one object: what the network thread reads for every
    /// message. Copying `Running` for each one retained and released each of its
    /// references and the router's (about 1 % of the CPU under position traffic); this
    /// is one.
    private final class Routing: Sendable {
        let router: MessageRouter
        let lanes: [Lane]
        /// The start's sweep of stale retained topics, which takes the messages under its
        /// filters while it runs.
        let sweep: RetainedCollection

        init(router: MessageRouter, lanes: [Lane], sweep: RetainedCollection) {
            self.router = router
            self.lanes = lanes
            self.sweep = sweep
        }
    }

    /// Whether this bridge is still alive, for the client's callbacks, which reach it
    /// through an `unowned(unsafe)` reference: a weak one made each event (each position)
    /// take a strong reference and release it through the side table weak references
    /// need, about 2 % of the CPU under position traffic. `deinit` clears it before it
    /// stops the client, which waits for a callback in progress, so no callback touches
    /// a bridge that is gone (one that ran `deinit` itself, on the network thread, only
    /// asks the client to stop: the callbacks after it see this cleared).
    private let alive = Liveness()

    /// A flag the client's callbacks hold on their own (`alive`).
    private final class Liveness: Sendable {
        let value = Atomic<Bool>(true)
    }

    /// Refusals, messages left out and deliveries' outcomes, counted, logged and
    /// reported: what the workers' callbacks hold, never the bridge itself.
    private let reports: BridgeReports
    private let housekeepingQueue = DispatchQueue(label: "geotify.housekeeping")

    /// A bridge for `settings`; nothing happens until `start()`. `scheduler` is the clock
    /// and timer source (the system's by default; a `ManualScheduler` in tests).
    package convenience init(settings: Settings, logger: Logger) {
        self.init(settings: settings, logger: logger, scheduler: SystemScheduler())
    }

    /// A bridge for `settings` whose time comes from `scheduler`; its start's sweep keeps
    /// `sweepBound` stale topics at most (`RetainedCollection.maximumStale`, or fewer in a
    /// test).
    package init(settings: Settings, logger: Logger, scheduler: any Scheduler, sweepBound: Int = RetainedCollection.maximumStale) {
        self.settings = settings
        self.sweepBound = sweepBound
        self.logger = logger
        self.scheduler = scheduler
        topics = Topics(prefix: settings.topicPrefix, shard: settings.shard)
        messages = OutboundMessages(topics: topics)
        presence = PresenceMessages(topics: topics)
        discovery = HomeAssistantDiscovery.of(settings, topics: topics)
        health = StateHealth(logger: logger, counters: counters, messages: messages, uptime: { scheduler.uptime })
        publisher = Publisher(
            counters: counters, health: health,
            waitingLimit: settings.maximumWaitingMessages, maximumPacketBytes: settings.maximumPacketBytes)
        shardOccupancy = ShardOccupancy(topics: topics, occupancy: occupancy)
        reports = BridgeReports(
            settings: settings, topics: topics, messages: messages, publisher: publisher, counters: counters, logger: logger,
            scheduler: scheduler)
    }

    /// Where the web console listens (with the port the system chose when `http.listen`
    /// asks for port 0); nil when it does not run.
    package var consoleAddress: ListenAddress? { running.withLock { $0?.console?.address } }

    /// The web console's open HTTP connections (0 when it does not run).
    package var consoleConnections: Int { running.withLock { $0?.console?.server }?.connectionCount ?? 0 }

    /// Whether the broker has acknowledged everything the bridge decided to publish (a
    /// benchmark waits for this after the first fixes' announcements): the announcements
    /// of the fences (Home Assistant's discovery configs) all handed to the publisher, and
    /// the publisher drained. An announcement is built first and then handed over in
    /// pieces as the publisher has room, so the publisher alone can be drained while
    /// more is to come.
    package var outboundDrained: Bool {
        let announced = running.withLock { $0?.announcer }?.isIdle ?? true
        return announced && publisher.isDrained
    }

    /// Whether the start's sweep of stale retained topics has read what the broker holds
    /// and handed it to be judged (after the announcements, with the fences in force
    /// then): a change of the fences from then on is judged after it. False when not
    /// running.
    package var sweepHasCollected: Bool { running.withLock { $0 }?.routing.sweep.hasCollected ?? false }

    /// The fences in force (empty when not running).
    package var fenceBook: FenceBook { running.withLock { $0 }?.fences.book ?? FenceBook() }

    /// Loads the fences and the state, then connects (in the background; the broker may
    /// come later). Throws when the settings, the fence file or the state directory are
    /// unusable or the MQTT options are refused.
    package func start() throws(StartupError) {
        try phase.withLock { _ throws(StartupError) in try startLocked() }
    }

    private func startLocked() throws(StartupError) {
        guard running.withLock({ $0 == nil }) else { throw StartupError(["the bridge is already running"]) }
        let router: MessageRouter
        do {
            try settings.validate()
            router = try MessageRouter(settings: settings, topics: topics)
        } catch {
            throw StartupError(["the settings are not usable: \(error)"])
        }
        let lock: StateDirectoryLock
        do {
            lock = try StateDirectoryLock(directory: settings.stateDirectory)
        } catch {
            throw StartupError(["cannot use the state directory \(settings.stateDirectory): \(error.reason)"])
        }
        do throws(StoreError) {
            if settings.resetState {
                for path in try StateFiles.setAside(directory: settings.stateDirectory, now: scheduler.now) {
                    logger.warning("--reset-state: set \(path) aside; starting with empty state")
                }
            }
            for note in try StateFiles.check(directory: settings.stateDirectory) { logger.warning(note) }
        } catch {
            throw StartupError([error.description])
        }
        do {
            for path in try AtomicFile.removeLeftovers(of: settings.fencesPath) {
                logger.info("removed \(path), a temporary file left by a write that was interrupted")
            }
        } catch {
            logger.warning("could not look for leftover temporary files of the fence file: \(error)")
        }
        let store: StateStore
        do {
            store = try StateStore(directory: settings.stateDirectory, durability: settings.durability)
        } catch {
            throw StartupError(["cannot use the state directory \(settings.stateDirectory): \(error)"])
        }
        if let damaged = store.damagedMark {
            logger.warning(damaged.warning)
            counters.add(.outboxMarkDamaged)
        }
        let fences = LiveFenceBook(
            file: FenceFile(path: settings.fencesPath, limits: settings.limits, maximumBytes: settings.maximumFenceFileBytes, shard: settings.shard),
            store: store, logger: logger, counters: counters, messages: messages, report: { [publisher] in publisher.send($0) })
        try fences.load()
        if let warning = FenceFileAccess.warning(settings: settings) { logger.warning(warning) }
        var states: [String: DeviceState]
        let named: Set<String>
        let pending: [StateStore.PendingMessage]
        let pendingCount: Int
        let unacknowledged: Int
        do {
            (states, named) = try store.loadDevicesAndNames()
            unacknowledged = try store.unacknowledgedAtStop()
            // At most what the publisher keeps in memory (and one more, so it knows the
            // rest waits in the outbox): a long outage may have left millions.
            pendingCount = try store.pendingCount()
            pending = try store.pendingMessages(limit: publisher.waitingLimit + 1)
        } catch {
            throw StartupError(["cannot use the state directory \(settings.stateDirectory): \(error)"])
        }
        if let shard = settings.shard {
            // Left by another assignment of the devices (a change of the number of
            // instances without `geotify state reshard`): not this instance's to evaluate
            // or count, and kept in the database for a reshard to move.
            let foreign = states.keys.filter { !shard.owns($0) }
            if !foreign.isEmpty {
                logger.warning("the state directory \(settings.stateDirectory) holds the states of \(Counted(foreign.count, "device")) that shard \(shard) does not own; they are ignored (left in the database). Did the number of instances change without `geotify state reshard` (docs/scaling.md)?")
                for device in foreign { states[device] = nil }
            }
        }
        let book = fences.book
        occupancy.load(states, book: book)
        let announcer = FenceChangeAnnouncer(
            publisher: publisher, presence: presence, occupancy: occupancy, discovery: discovery,
            waypoints: settings.ownTracksWaypoints ? OwnTracksWaypoints(topics: OwnTracksTopics(filter: settings.ownTracksTopic)) : nil,
            announceLimit: settings.limits.maximumFencesPerDevice, updates: updates)

        let laneCount = max(1, settings.lanes)
        let admission = DeviceAdmission(
            maximum: settings.maximumDevices, perOwner: settings.maximumDevicesPerOwner,
            devices: states.keys.filter { !book.knows($0) })
        var configuration = LaneConfiguration(settings: settings)
        if let path = settings.ownTracksKeysFile {
            do {
                let keys = try OwnTracksKeys(contentsOf: path)
                for warning in keys.warnings { logger.warning(warning) }
                configuration.decoder = LocationDecoder(maximumPayloadBytes: settings.maximumPayloadBytes, keys: keys)
            } catch {
                throw StartupError([error.message])
            }
        }
        let deliveries: DeliveryWorker?
        do {
            deliveries = try deliveryWorker(store: store)
        } catch {
            throw StartupError(["cannot use the state directory \(settings.stateDirectory) for deliveries: \(error)"])
        }
        var wakeDeliveries: (@Sendable () -> Void)?
        if let deliveries { wakeDeliveries = { deliveries.wake() } }
        let environment = Lane.Environment(
            store: store, publisher: publisher, counters: counters, logger: logger, fences: fences, occupancy: occupancy,
            presence: presence, health: health, announcer: announcer, scheduler: scheduler, limits: settings.limits,
            wakeDeliveries: wakeDeliveries,
            heldDeliveries: HeldDeliveries(bounds: Dictionary(settings.notify.targets.map { ($0.name, $0.bound) }, uniquingKeysWith: { first, _ in first })),
            refuseDeliveries: { [reports] refusals in reports.refusedDeliveries(refusals) }, updates: updates)
        var laneStates = Array(repeating: [String: DeviceState](), count: laneCount)
        var laneNamed = Array(repeating: Set<String>(), count: laneCount)
        for (device, state) in states {
            let lane = MessageRouter.lane(of: device, among: laneCount)
            laneStates[lane][device] = state
            if named.contains(device) { laneNamed[lane].insert(device) }
        }
        let now = scheduler.now
        let lanes = laneStates.enumerated().map { index, states in
            Lane(
                index: index,
                core: LaneCore(configuration: configuration, admission: admission, states: states, named: laneNamed[index], book: book, now: now),
                environment: environment)
        }

        var options = MQTTOptions(clientID: settings.shard?.clientID(settings.clientID) ?? settings.clientID, host: settings.broker.host, port: settings.broker.port)
        options.cleanSession = false
        options.keepAlive = settings.keepAlive
        options.maximumInFlight = Publisher.windowSize
        options.maximumIncomingPacketBytes = settings.largestIncomingPacketBytes
        options.will = MQTTWill(topic: topics.status, payload: Array("offline".utf8), qos: 1, retain: true)
        do {
            for warning in try settings.security.configure(&options, broker: settings.broker) { logger.warning(warning) }
        } catch {
            throw StartupError(["cannot connect to \(settings.broker): \(error)"])
        }
        let client: MQTTClient
        do {
            client = try MQTTClient(options: options, scheduler: scheduler, hurry: { [publisher] in publisher.canSendMore }) {
                [alive, unowned(unsafe) self] event in
                guard alive.value.load(ordering: .acquiring) else { return }
                self.handle(event)
            }
        } catch {
            throw StartupError(["cannot set up the MQTT client: \(error)"])
        }
        publisher.attach(client, store: store) { [reports] message, reason in reports.notHandedOver(message, reason) }
        let sweep = RetainedSweep(
            topics: topics, kept: settings.deviceTopics, discovery: discovery, announceLimit: settings.limits.maximumFencesPerDevice)
        // The devices the file does not name whose state the start keeps (the lanes forget
        // those saved while the file named them, and under strictDevices all:
        // `LaneCore.leaveRemovedFences`), for the sweep's first look at each retained topic
        // as it comes; the lanes look again with the states they keep when they clear.
        let keptUnnamed: Set<String> = settings.strictDevices ? [] : Set(states.keys.lazy.filter { !book.knows($0) && !named.contains($0) })
        let collection = RetainedCollection(
            sweep: sweep, bound: sweepBound, client: client, scheduler: scheduler, logger: logger, counters: counters,
            stale: { [fences] found in sweep.isStale(found, book: fences.book, holdsState: keptUnnamed.contains) }
        ) { [publisher, counters, logger] found in
            announcer.afterAnnouncements {
                Bridge.clearStale(
                    found, sweep: sweep, book: fences.book, lanes: lanes, publisher: publisher, counters: counters, logger: logger)
            }
        }
        statusClosed.withLock { $0 = false }
        // What was decided before the last stop goes first: before the housekeeping
        // timer (a lane's timer may fire at its first tick) or the web console (a posted
        // position) can queue anything newer.
        publisher.queue(pending.map(\.message), outboxIDs: pending.map(\.id))
        publisher.pump()

        let started = scheduler.uptime
        let housekeeper = Housekeeper(
            Housekeeper.Parts(
                lanes: lanes, store: store, fences: fences, announcer: announcer, client: client, publisher: publisher, reports: reports,
                shardOccupancy: shardOccupancy, counters: counters, logger: logger, scheduler: scheduler, topics: topics,
                settings: settings, started: started),
            queue: housekeepingQueue)
        let housekeeping = housekeeper.start()
        running.withLock {
            $0 = Running(
                client: client, lock: lock, store: store, fences: fences, announcer: announcer,
                routing: Routing(router: router, lanes: lanes, sweep: collection),
                housekeeper: housekeeper, housekeeping: housekeeping, deliveries: deliveries, started: started)
        }
        deliveries?.start()
        if let http = settings.http {
            let backend = BridgeConsole(
                lanes: lanes, router: router, fences: fences, announcer: announcer, client: client, settings: settings,
                health: health, counters: counters, publisher: publisher, updates: updates, scheduler: scheduler, started: started,
                refuse: { [reports] error, topic in reports.refuse(error, topic: topic) })
            do {
                let console = try Console(
                    settings: http, backend: backend, scheduler: scheduler,
                    log: { [logger] level, message in logger.log(Logger.Level(level), message) },
                    count: { [counters] name in counters.add(.http(name)) })
                let address = try console.start()
                running.withLock { $0?.console = (console, address) }
            } catch {
                stopLocked(timeout: 0)
                throw StartupError(["cannot start the web console: \(error)"])
            }
        }
        if unacknowledged > 0 {
            logger.warning("\(unacknowledged) messages were handed to the broker just before the last stop but not acknowledged; not sending them again, so no subscriber sees a notification twice")
        }
        if pendingCount > 0 { logger.info("sending \(pendingCount) messages decided before the last stop and never handed to the broker") }
        logger.info("started: \(Counted(book.fenceCount, "fence")) for \(Counted(book.devices.count, "device")), \(Counted(states.count, "device")) with state, \(Counted(laneCount, "lane")); connecting to \(settings.broker)")
        do {
            try client.start()
        } catch {
            stopLocked(timeout: 0)
            throw StartupError(["cannot connect to \(settings.broker): \(error)"])
        }
    }

    /// Stops gracefully: takes no more input, finishes what is queued and saves every
    /// state, publishes `offline` and waits (up to `timeout` seconds) for the broker to
    /// acknowledge it and what was published before it, then disconnects.
    package func stop(timeout: Double = 5) {
        phase.withLock { _ in stopLocked(timeout: timeout) }
    }

    /// A bridge let go while running stops: at once, leaving the will (`offline`) to
    /// the broker. Its client's callbacks are ignored from the start of this on (`alive`).
    deinit {
        alive.value.store(false, ordering: .releasing)
        stop(timeout: 0)
    }

    private func stopLocked(timeout: Double) {
        guard let current = running.withLock({ running -> Running? in
            guard running?.stopping == false else { return nil }
            running?.stopping = true
            return running
        }) else { return }
        current.console?.server.stop()
        current.routing.sweep.stop()
        current.housekeeper.end(current.housekeeping)
        current.deliveries?.stop()
        for lane in current.lanes { lane.saveAllFixes() }
        for lane in current.lanes { lane.waitUntilIdle() }
        current.announcer.waitUntilAnnounced()
        // The sweep's clears of the devices' topics go from the announcer's queue to the
        // lanes.
        for lane in current.lanes { lane.waitUntilIdle() }
        let acknowledged = DispatchSemaphore(value: 0)
        let announced = statusClosed.withLock { closed -> Bool in
            closed = true
            guard current.client.isConnected else { return false }
            publisher.send(OutboxMessage(topic: topics.status, payload: Array("offline".utf8), qos: 1, retain: true)) {
                acknowledged.signal()
            }
            return true
        }
        if announced && !Self.wait(for: acknowledged, seconds: timeout) {
            // A clean DISCONNECT would make the broker discard the will and keep `online`.
            logger.warning("the broker did not acknowledge \"offline\" within \(timeout) s; leaving without a DISCONNECT, so that it publishes the will (\"offline\")")
            current.client.dropConnectionUncleanly()
        }
        current.client.stop()
        publisher.saveMarks()
        _ = try? current.store.pruneAcknowledged()
        // Given back now, not when the last copy of `current` goes (a callback may still
        // hold one): a bridge started next in this process takes the directory.
        current.lock.release()
        logger.info("stopped")
        running.withLock { $0 = nil }
    }

    /// Blocks until every message received so far has been evaluated (for tests and
    /// orderly shutdown).
    /// Waits until `semaphore` is signalled or `seconds` have passed on the monotonic
    /// clock (`ContinuousClock`), not less: a semaphore's timed wait, on the dispatch
    /// clock, gave up 1.7 ms before its time on this one in a test run, so what is left is
    /// waited again. Says whether the semaphore was signalled.
    package static func wait(for semaphore: DispatchSemaphore, seconds: Double) -> Bool {
        let deadline = ContinuousClock.now + .seconds(max(0, seconds))
        while true {
            let left = (deadline - ContinuousClock.now).components
            let seconds = Double(left.seconds) + Double(left.attoseconds) * 1e-18
            if semaphore.wait(timeout: .now() + max(0, seconds)) == .success { return true }
            if ContinuousClock.now >= deadline { return false }
        }
    }

    package func waitUntilIdle() {
        running.withLock { $0 }?.lanes.forEach { $0.waitUntilIdle() }
    }

    /// The worker that delivers notifications to the targets in the settings (webhooks,
    /// push services, e-mail) from the queue in the state database; nil without targets.
    private func deliveryWorker(store: StateStore) throws(StoreError) -> DeliveryWorker? {
        guard !settings.notify.targets.isEmpty else { return nil }
        let queue = try DeliveryQueue(path: store.path, durability: settings.durability)
        return DeliveryWorker(queue: queue, targets: settings.notify.targets, scheduler: scheduler) { [reports] report in
            reports.delivery(report)
        }
    }

    /// Reads the fence file again now (SIGHUP), applying it if it changed and is valid.
    package func reloadFences() {
        guard let current = running.withLock({ $0 }) else { return }
        if let change = current.fences.reloadIfChanged(readContents: true) { current.announcer.announce(change) }
    }

    /// What the client reports, on its network thread. The event is taken, not borrowed,
    /// so a position's topic and payload move on to its lane's batch without a copy
    /// (`__owned` with `if case`: a `consuming` parameter, or a `switch`, made the
    /// optimizer copy the message out of the event and release the event after).
    private func handle(_ event: __owned MQTTEvent) {
        if case .message(let message) = event {
            guard discovery?.birthTopic != message.topic else { return heard(birth: message) }
            // Positions and commands, the bulk of the traffic, need only the routing.
            // Read field by field: `flatMap` would copy the whole `Running`.
            if let routing = running.withLock({ $0?.stopping == false ? $0?.routing : nil }) { route(message, routing) }
            return
        }
        // Acknowledgements, one for each notification and each last value written, need
        // only the publisher: copying `Running` for each retained and released each of
        // its references (about 1.4 % of the CPU under position traffic). Nothing to check
        // first: the client calls back only between its start and its stop, both made
        // while `running` is set.
        if case .published(let messageID) = event {
            publisher.acknowledged(messageID)
            return
        }
        if case .publishRefused(let messageID, let code, let reason) = event {
            reports.publishRefused(topic: publisher.refused(messageID), code: code, reason: reason)
            return
        }
        handleOther(event)
    }

    /// The events other than positions, commands and acknowledgements.
    private func handleOther(_ event: MQTTEvent) {
        guard let current = running.withLock({ $0 }) else { return }
        switch event {
        case .message, .published, .publishRefused:
            break // handled in `handle(_:)`, without `current`
        case .caughtUp:
            burstArrival.store(0, ordering: .relaxed)
            submitRouted(current)
            let dropped = otherShards.exchange(0, ordering: .relaxed)
            if dropped > 0 { counters.add(.messagesOtherShards, dropped) }
            publisher.pump()
        case .connected(let sessionPresent):
            refusedAttempt.store(false, ordering: .relaxed)
            running.withLock { $0?.connectedOnce = true }
            logger.info("connected to \(settings.broker) (session \(sessionPresent ? "resumed" : "new"))")
            do {
                inputSubscriptions.withLock { $0 = [:] }
                for input in SubscribedTopics(settings: settings).inputs {
                    let messageID = try current.client.subscribe(input.filter, qos: 1)
                    inputSubscriptions.withLock { $0[messageID] = input.filter }
                }
            } catch {
                logger.error("could not subscribe: \(error)")
            }
            publisher.connected()
            statusClosed.withLock { closed in
                if !closed { publisher.send(OutboxMessage(topic: topics.status, payload: Array("online".utf8), qos: 1, retain: true)) }
            }
            current.announcer.announceAll(current.fences.book)
            // The devices' retained last values go at QoS 0: on every connection, the
            // first after a start included, each lane publishes them all from its states,
            // so what a lost connection, a crash or a broker that lost its retained
            // messages left out is published again.
            for lane in current.routing.lanes { lane.republishAll() }
            current.routing.sweep.connected()
        case .connectionRefused(let code, let reason):
            publisher.disconnected()
            counters.add(.errors(.connectionRefused))
            refusedAttempt.store(true, ordering: .relaxed)
            logger.error(Bridge.connectionRefused(
                broker: settings.broker.description, code: code, reason: reason, version: settings.security.protocolVersion))
        case .disconnected(let code, let reason):
            publisher.disconnected()
            if event.isSessionTakenOver {
                counters.add(.errors(.sessionTakenOver))
                logger.error(Bridge.sessionTakenOver(broker: settings.broker.description, clientID: settings.clientID, reason: reason))
            } else if refusedAttempt.exchange(false, ordering: .relaxed) && !current.stopping {
                // The end of an attempt the broker refused, said by the refusal's line:
                // libmosquitto's words for it ("a network protocol error" after an MQTT 5
                // refusal) would point at the network.
            } else if event.isClosedUnanswered && !current.stopping {
                counters.add(.errors(.connectionRefused))
                logger.error(Bridge.closedUnanswered(broker: settings.broker.description))
            } else if code != 0 {
                logger.warning(Bridge.connectionEnded(
                    broker: settings.broker.description, reason: reason, stopping: current.stopping, connectedOnce: current.connectedOnce))
            }
        case .subscribed(let messageID, let granted):
            if current.routing.sweep.subscribed(messageID, granted: granted) { break }
            let filter = inputSubscriptions.withLock { $0.removeValue(forKey: messageID) }
            if let code = granted.first(where: { $0 >= 128 }) {
                counters.add(.errors(.subscriptionRefused))
                logger.error(Bridge.subscriptionRefused(filter: filter, code: code, version: settings.security.protocolVersion))
            }
        case .unsubscribed(let messageID):
            _ = current.routing.sweep.unsubscribed(messageID)
        }
    }

    /// Clears what of `found` (the bridge's retained topics the broker held at the
    /// start, `RetainedCollection`) `sweep` finds stale with `book`: the occupancy counts
    /// and Home Assistant configs here, on the announcer's queue; each device's topics on
    /// its lane, after them, so Home Assistant forgets an entity before its topic empties.
    private static func clearStale(
        _ found: [RetainedTopic], sweep: RetainedSweep, book: FenceBook, lanes: [Lane], publisher: Publisher, counters: Counters,
        logger: Logger
    ) {
        var byLane = Array(repeating: [RetainedTopic](), count: lanes.count)
        var others: [RetainedTopic] = []
        for topic in found {
            if let device = topic.laneDevice {
                byLane[MessageRouter.lane(of: device, among: lanes.count)].append(topic)
            } else {
                others.append(topic)
            }
        }
        let clears = sweep.clearances(of: others, book: book, holdsState: { _ in false })
        if !clears.isEmpty {
            logger.info("clearing \(clears.count) retained occupancy counts and Home Assistant configs of fences and devices removed while the bridge was stopped")
            counters.add(.sweepCleared, clears.count)
            publisher.sendPatiently(clears)
        }
        for (lane, topics) in zip(lanes, byLane) where !topics.isEmpty { lane.clearStale(topics, sweep: sweep) }
    }

    /// Home Assistant's birth message: announces the devices again when it says `online`.
    private func heard(birth message: MQTTMessage) {
        guard let current = running.withLock({ $0 }), !current.stopping else { return }
        if message.payload == Array("online".utf8) {
            logger.info("Home Assistant came online; announcing the devices again")
            current.announcer.announceAll(current.fences.book)
        }
    }

    /// The messages routed since the last burst ended, by lane; only the network thread
    /// touches it.
    private let routed = Mutex<[[Inbound]]>([])
    /// Other shards' messages dropped since the last burst ended, counted at its end.
    private let otherShards = Atomic<Int>(0)
    /// When the first message of the burst being read arrived (the bits of the wall
    /// clock's seconds; 0 before the first): every message of a burst counts as arrived
    /// then, so the clock is read once a burst, not once a message (about 1 % of the
    /// CPU under position traffic). A burst lasts at most a few milliseconds
    /// (`BurstPacing`), and its messages all waited in the socket since about then.
    private let burstArrival = Atomic<UInt64>(0)

    /// Routes one message to its lane's next batch, or refuses it for its topic.
    private func route(_ message: __owned MQTTMessage, _ current: Routing) {
        if current.sweep.isActive, current.sweep.take(message) { return }
        var arrival = burstArrival.load(ordering: .relaxed)
        if arrival == 0 {
            arrival = scheduler.now.bitPattern
            burstArrival.store(arrival, ordering: .relaxed)
        }
        switch current.router.route(message, arrival: Double(bitPattern: arrival)) {
        case .lane(let index, let inbound):
            // Moved into the batch through an optional the lock's closure empties: a
            // closure can only copy what it captures as a constant.
            var moving: Inbound? = inbound
            routed.withLock { batches in
                if batches.count != current.lanes.count { batches = Array(repeating: [], count: current.lanes.count) }
                guard let inbound = moving.take() else { return }
                batches[index].append(inbound)
                if batches[index].count >= MessageRouter.batchLimit {
                    let batch = batches[index]
                    batches[index].removeAll(keepingCapacity: true)
                    counters.add(.messagesReceived, batch.count)
                    current.lanes[index].handle(batch)
                }
            }
        case .otherShard:
            otherShards.add(1, ordering: .relaxed)
        case .occupancy(let part):
            shardOccupancy.receive(part, queue: publisher.queue)
            publisher.pump()
        case .unrouted:
            counters.add(.messagesReceived)
            counters.add(.messagesUnrouted)
        case .refused(let error, let topic):
            counters.add(.messagesReceived)
            reports.refuse(error, topic: topic)
        }
    }

    /// Hands the lanes the messages routed to them since the last burst ended, to be
    /// committed together (`Lane.handle(_:)`).
    private func submitRouted(_ current: Running) {
        routed.withLock { batches in
            var submitted: [(lane: Lane, batch: [Inbound])] = []
            for index in batches.indices where !batches[index].isEmpty {
                submitted.append((current.lanes[index], batches[index]))
                counters.add(.messagesReceived, batches[index].count)
                batches[index].removeAll(keepingCapacity: true)
            }
            Lane.handle(submitted)
        }
    }

    /// The warning for a connection that ended with an error (`reason`): while stopping, that
    /// the stop could not end it cleanly (the broker publishes the will); otherwise that the
    /// bridge reconnects, or, never connected yet, retries.
    package static func connectionEnded(broker: String, reason: String, stopping: Bool, connectedOnce: Bool) -> String {
        if stopping {
            return "stopping without a clean disconnect from \(broker): \(words(reason))"
        }
        return connectedOnce
            ? "lost the connection to the broker \(broker): \(words(reason)); reconnecting"
            : "cannot reach the broker \(broker): \(words(reason)); retrying"
    }

    /// The line about this bridge's session taken over, `reason` saying how it was told
    /// (`MQTTEvent.disconnected` with code `sessionTakenOver`). When only the pattern of
    /// short connections told it (an MQTT 3.1.1 broker says nothing), the reason also
    /// names mosquitto closing the connection for a packet larger than its
    /// `max_packet_size`, which looks the same: the line then says which setting matches it.
    package static func sessionTakenOver(broker: String, clientID: String, reason: String) -> String {
        let oversize = reason.contains("max_packet_size")
            ? "; if the broker's log says \"oversize packet\" instead, set maximumPacketBytes to its max_packet_size" : ""
        return "another client took over this bridge's session at \(broker) (client id \"\(clientID)\"): \(words(reason)). A second bridge with the same clientId, or a broker login that may choose its client id? Give each bridge its own clientId and set use_username_as_clientid in the broker (docs/security.md)\(oversize); reconnecting"
    }

    /// The line about an attempt the broker closed without answering CONNECT
    /// (`MQTTEvent.closedUnanswered`): what a listener that expects TLS does with a plain
    /// CONNECT (a handshake that fails), and what mosquitto 2.0.11 does when it refuses the
    /// connection of an MQTT 3.1.1 client for its own limits, which the operator finds in
    /// its log and its mosquitto.conf, not in the network. The bridge's will (`offline`,
    /// retained, QoS 1) is refused by `retain_available false` and by `max_qos 0`.
    package static func closedUnanswered(broker: String) -> String {
        "the broker \(broker) closed the connection without answering CONNECT: a listener that expects TLS (mqtts://) does so, and mosquitto when max_connections is reached or when it refuses the bridge's will (retained, QoS 1: retain_available false, or max_qos 0 on the listener); its log says which; retrying"
    }

    /// The line about the broker's refusal of the connection with CONNACK `code`
    /// (`reason` its text): an MQTT 3.1.1 return code, or an MQTT 5 reason code with what
    /// to change when it is the broker's option that refuses the bridge's will (mosquitto
    /// 2.0.11 answers 0x9A under `retain_available false` and 0x9B when the will's QoS 1
    /// is above the listener's `max_qos`), which the bridge cannot do without.
    package static func connectionRefused(broker: String, code: Int, reason: String, version: MQTTProtocolVersion) -> String {
        let line = "the broker \(broker) refused the connection: \(words(reason))"
        guard version == .v5 else { return line + " (code \(code))" }
        let hint = switch code {
        case 0x9A: "; the bridge's will and status are retained messages: set retain_available true in mosquitto.conf"
        case 0x9B: "; the bridge's will and notifications go at QoS 1: the listener's max_qos must be 1 or more"
        default: ""
        }
        return line + " (MQTT v5 reason \(hex(code)))" + hint
    }

    /// The line about the broker's refusal, with SUBACK code `code`, of the subscription
    /// to `filter` (nil when it is not known): an MQTT 3.1.1 broker says only that it
    /// failed (0x80), an MQTT 5 broker why (0x87 its access rules, 0xA2 no wildcards, ...).
    package static func subscriptionRefused(filter: String?, code: Int, version: MQTTProtocolVersion) -> String {
        let subscription = filter.map { "the subscription to \($0)" } ?? "a subscription"
        return switch version {
        case .v311: "the broker refused \(subscription) (SUBACK \(hex(code))); check its ACL"
        case .v5:
            "the broker refused \(subscription): \(words(MQTTEvent.reason(of: code))) (MQTT v5 reason \(hex(code)))"
                + (code == 0x87 ? "; check its ACL" : "")
        }
    }

    /// `code` as MQTT's specification writes reason codes (0x87).
    static func hex(_ code: Int) -> String {
        "0x" + String(code, radix: 16, uppercase: true)
    }

    /// A reason as libmosquitto words it ("The connection was lost."), as part of a sentence.
    static func words(_ reason: String) -> String {
        var text = reason.hasSuffix(".") ? String(reason.dropLast()) : reason
        // Lowered only when the first word's other letters are all lower case: not
        // "QoS not supported" nor an acronym.
        let firstWord = text.prefix { $0 != " " }
        if let first = text.first, firstWord.dropFirst().allSatisfy({ !$0.isUppercase }) { text = first.lowercased() + text.dropFirst() }
        return text
    }
}
