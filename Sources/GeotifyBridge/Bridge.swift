import Dispatch
import Foundation
import GeotifyCore
import GeotifyMQTT
import GeotifyStore
import Synchronization

/// The running bridge: subscribes to positions and commands, evaluates each device's
/// fences on its lane, and publishes notifications, badges, presence, occupancy, Home
/// Assistant discovery, statistics, status and errors.
///
/// It is the imperative shell around the pure evaluator: the broker, the fence file,
/// the state directory and the clock are all at its edges, the clock injected.
public final class Bridge: Sendable {
    public let settings: Settings
    public let counters = Counters()
    private let logger: Logger
    private let now: @Sendable () -> Double
    private let topics: Topics
    private let messages: OutboundMessages
    private let presence: PresenceMessages
    private let discovery: HomeAssistantDiscovery?
    private let waypoints: OwnTracksWaypoints?
    private let occupancy = Occupancy()
    private let health: StateHealth
    private let publisher: Publisher
    private let running = Mutex<Running?>(nil)

    /// What exists only while the bridge runs.
    private struct Running: Sendable {
        let client: MQTTClient
        let fences: LiveFenceBook
        let lanes: [Lane]
        let started: Double
        /// Whether the broker has accepted a connection since the start.
        var connectedOnce = false
        let ownTracks: TopicFilter
        let location: TopicFilter
        let commands: TopicFilter
        var stopping = false
    }

    /// A bridge for `settings`; nothing happens until `start()`. `now` gives the time in
    /// seconds since 1970.
    public init(settings: Settings, logger: Logger, now: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.settings = settings
        self.logger = logger
        self.now = now
        topics = Topics(prefix: settings.topicPrefix)
        messages = OutboundMessages(topics: topics)
        presence = PresenceMessages(topics: topics)
        discovery = settings.homeAssistantEnabled ? HomeAssistantDiscovery(prefix: settings.homeAssistantPrefix, topics: topics) : nil
        waypoints = settings.ownTracksWaypoints ? OwnTracksWaypoints(topics: OwnTracksTopics(filter: settings.ownTracksTopic)) : nil
        health = StateHealth(logger: logger, counters: counters, messages: messages)
        publisher = Publisher(logger: logger, counters: counters, health: health)
    }

    /// Shared sets with more fences than this are evaluated but not announced fence by
    /// fence (Home Assistant entities, presence topics).
    private var announceLimit: Int { settings.limits.maximumFencesPerDevice }

    /// The fences in force (empty when not running).
    public var fenceBook: FenceBook { running.withLock { $0 }?.fences.book ?? FenceBook() }

    /// Loads the fences and the state, then connects (in the background; the broker may
    /// come later). Throws when the fence file does not validate, the state directory
    /// is unusable or the MQTT options are refused.
    public func start() throws(StartupError) {
        let store: StateStore
        do {
            store = try StateStore(directory: settings.stateDirectory, durability: settings.durability)
        } catch {
            throw StartupError(["cannot use the state directory \(settings.stateDirectory): \(error)"])
        }
        let fences = LiveFenceBook(
            file: FenceFile(path: settings.fencesPath, limits: settings.limits, maximumBytes: settings.maximumFenceFileBytes), store: store, logger: logger,
            counters: counters, messages: messages, report: { [publisher] in publisher.send($0) },
            changed: { [weak self] old, new in self?.fencesChanged(from: old, to: new) })
        try fences.load()
        let states: [String: DeviceState]
        let pending: [StateStore.PendingMessage]
        let discarded: Int
        do {
            states = try store.loadDevices()
            discarded = try store.discardSentMessages()
            pending = try store.pendingMessages()
        } catch {
            throw StartupError(["cannot use the state directory \(settings.stateDirectory): \(error)"])
        }
        occupancy.load(states, book: fences.book)

        let environment = Lane.Environment(
            settings: settings, decoder: LocationDecoder(maximumPayloadBytes: settings.maximumPayloadBytes),
            messages: messages, store: store, publisher: publisher, counters: counters, logger: logger,
            fences: fences, occupancy: occupancy, presence: presence,
            ownTracks: settings.ownTracksTransitions ? OwnTracksTransition(topics: OwnTracksTopics(filter: settings.ownTracksTopic)) : nil,
            admission: DeviceAdmission(maximum: settings.maximumDevices, devices: states.count), health: health,
            now: now)
        let laneCount = max(1, settings.lanes)
        var laneStates = Array(repeating: [String: DeviceState](), count: laneCount)
        for (device, state) in states { laneStates[Bridge.lane(of: device, among: laneCount)][device] = state }
        let lanes = laneStates.enumerated().map { Lane(index: $0.offset, states: $0.element, environment: environment) }

        var options = MQTTOptions(clientID: settings.clientID, host: settings.broker.host, port: settings.broker.port)
        options.cleanSession = false
        options.keepAlive = settings.keepAlive
        options.will = MQTTWill(topic: topics.status, payload: Array("offline".utf8), qos: 1, retain: true)
        do {
            for warning in try settings.security.configure(&options, broker: settings.broker) { logger.warning(warning) }
        } catch {
            throw StartupError(["cannot connect to \(settings.broker): \(error)"])
        }
        let client: MQTTClient
        do {
            client = try MQTTClient(options: options) { [weak self] event in self?.handle(event) }
        } catch {
            throw StartupError(["cannot set up the MQTT client: \(error)"])
        }
        publisher.attach(client, store: store)

        do {
            running.withLock {
                $0 = Running(
                    client: client, fences: fences, lanes: lanes, started: now(),
                    ownTracks: try! TopicFilter(settings.ownTracksTopic), location: try! TopicFilter(settings.locationTopic),
                    commands: try! TopicFilter(topics.commands))
            }
            scheduleHousekeeping()
            if discarded > 0 {
                logger.warning("\(discarded) messages were handed to the broker just before the last stop but not acknowledged; not sending them again, so no subscriber sees a notification twice")
            }
            for message in pending { publisher.send(message.message, outboxID: message.id) }
            if !pending.isEmpty { logger.info("resending \(pending.count) unacknowledged messages from the outbox") }
            try client.start()
        } catch {
            throw StartupError(["cannot connect to \(settings.broker): \(error)"])
        }
        logger.info("started: \(fences.book.fenceCount) fences for \(fences.book.devices.count) devices, \(states.count) devices with state, \(laneCount) lanes; broker \(settings.broker)")
    }

    /// Stops gracefully: takes no more input, finishes what is queued, publishes
    /// `offline`, waits (up to `timeout` seconds) for the broker to acknowledge what was
    /// published, and disconnects.
    public func stop(timeout: Double = 5) {
        guard let current = running.withLock({ running -> Running? in
            guard running?.stopping == false else { return nil }
            running?.stopping = true
            return running
        }) else { return }
        for lane in current.lanes { lane.waitUntilIdle() }
        publisher.send(OutboxMessage(topic: topics.status, payload: Array("offline".utf8), qos: 1, retain: true))
        let deadline = now() + timeout
        while publisher.unacknowledged > 0 && current.client.isConnected && now() < deadline {
            usleep(10_000)
        }
        current.client.stop()
        publisher.flush()
        logger.info("stopped")
        running.withLock { $0 = nil }
    }

    /// Blocks until every message received so far has been evaluated (for tests and
    /// orderly shutdown).
    public func waitUntilIdle() {
        running.withLock { $0 }?.lanes.forEach { $0.waitUntilIdle() }
    }

    /// Reads the fence file again now (SIGHUP), applying it if it changed and is valid.
    public func reloadFences() {
        running.withLock { $0 }?.fences.reloadIfChanged(force: true)
    }

    /// While running: every 200 ms lets the lanes fire due dwell and minimum-duration
    /// timers; every second looks whether the fence file changed; every `statsInterval`
    /// publishes the statistics.
    private func scheduleHousekeeping(round: Int = 0, lastReport: Double? = nil) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(200)) { [weak self] in
            guard let self, let current = self.running.withLock({ $0 }), !current.stopping else { return }
            for lane in current.lanes { lane.tick() }
            if round % 5 == 4 { current.fences.reloadIfChanged() }
            var reported = lastReport ?? current.started
            if self.settings.statsInterval > 0 && self.now() - reported >= self.settings.statsInterval {
                self.publisher.send(self.statistics(current).message(topics: self.topics))
                reported = self.now()
            }
            self.scheduleHousekeeping(round: round + 1, lastReport: reported)
        }
    }

    /// The statistics now: counters, devices, fences, and the lanes' latencies since the
    /// last report.
    private func statistics(_ current: Running) -> StatsReport {
        var devices = 0
        var latency = LatencyHistogram()
        for lane in current.lanes {
            let statistics = lane.statistics()
            devices += statistics.devices
            latency.merge(statistics.latency)
        }
        return StatsReport(
            time: now(), uptime: now() - current.started, devices: devices, fences: current.fences.book.fenceCount,
            counters: counters.snapshot, latency: latency.summary)
    }

    /// Publishes the Home Assistant discovery configs of every device in the file.
    private func announce(_ book: FenceBook) {
        guard let discovery else { return }
        for message in discovery.configs(devices: book.announcedFences(limit: announceLimit)) { publisher.send(message) }
    }

    /// The fence file changed: clears the retained topics and Home Assistant entities
    /// of removed devices and fences, announces the new ones, and pushes changed fences
    /// to OwnTracks apps when asked to.
    private func fencesChanged(from old: FenceBook, to new: FenceBook) {
        let before = old.announcedFences(limit: announceLimit)
        let after = new.announcedFences(limit: announceLimit)
        var outbox = presence.removals(previous: before, current: after)
        for (owner, fence) in occupancy.prune(to: new) {
            outbox.append(OutboxMessage(topic: presence.occupancyTopic(owner: owner, fence: fence), payload: [], qos: 1, retain: true))
        }
        if let discovery {
            outbox += discovery.removals(previous: before, current: after)
            outbox += discovery.configs(devices: after.filter { before[$0.key] != $0.value })
        }
        if let waypoints {
            for (device, fences) in new.devices.sorted(by: { $0.key < $1.key }) where old.devices[device] != fences {
                let removed = old.fences(of: device).map(\.identifier).filter { id in !fences.contains { $0.identifier == id } }
                if let command = waypoints.command(for: device, fences: fences, removed: removed) { outbox.append(command) }
            }
        }
        for message in outbox { publisher.send(message) }
    }

    private func handle(_ event: MQTTEvent) {
        guard let current = running.withLock({ $0 }) else { return }
        switch event {
        case .message(let message):
            guard !current.stopping else { return }
            route(message, current)
        case .published(let messageID):
            publisher.acknowledged(messageID)
        case .connected(let sessionPresent):
            running.withLock { $0?.connectedOnce = true }
            logger.info("connected to \(settings.broker) (session \(sessionPresent ? "resumed" : "new"))")
            do {
                for filter in [settings.ownTracksTopic, settings.locationTopic, topics.commands] {
                    try current.client.subscribe(filter, qos: 1)
                }
                if let discovery { try current.client.subscribe(discovery.birthTopic, qos: 1) }
            } catch {
                logger.error("could not subscribe: \(error)")
            }
            publisher.connected()
            publisher.send(OutboxMessage(topic: topics.status, payload: Array("online".utf8), qos: 1, retain: true))
            announce(current.fences.book)
        case .connectionRefused(let code, let reason):
            publisher.disconnected()
            counters.add("errors.connection_refused")
            logger.error("the broker \(settings.broker) refused the connection: \(reason) (code \(code))")
        case .disconnected(let code, let reason):
            publisher.disconnected()
            if code != 0 {
                logger.warning(current.connectedOnce
                    ? "lost the connection to \(settings.broker): \(reason); reconnecting"
                    : "cannot reach the broker \(settings.broker): \(reason); retrying")
            }
        case .subscribed(_, let granted):
            if granted.contains(where: { $0 >= 128 }) {
                counters.add("errors.subscription_refused")
                logger.error("the broker refused a subscription (granted QoS \(granted)); check its ACL")
            }
        }
    }

    private func route(_ message: MQTTMessage, _ current: Running) {
        if let discovery, message.topic == discovery.birthTopic {
            if message.payload == Array("online".utf8) {
                logger.info("Home Assistant came online; announcing the devices again")
                announce(current.fences.book)
            }
            return
        }
        counters.add("messages_received")
        let arrival = now()
        let levels = message.topic.split(separator: "/", omittingEmptySubsequences: false)
        guard levels.count <= settings.maximumTopicDepth else {
            refuse(message, InputError(.invalidTopic, "the topic has more than \(settings.maximumTopicDepth) levels (maximumTopicDepth)"))
            return
        }
        let routed: (Inbound.Route, String)?
        if let device = current.ownTracks.device(inLevels: levels) {
            routed = (.location(.ownTracks), device)
        } else if let device = current.location.device(inLevels: levels) {
            routed = (.location(.plain), device)
        } else if let device = current.commands.device(inLevels: levels) {
            routed = (.command, device)
        } else {
            routed = nil
        }
        guard let (route, device) = routed else {
            counters.add("messages_unrouted")
            return
        }
        if let problem = Identifier.problem(device: device) {
            refuse(message, InputError(.invalidTopic, "no usable device in the topic: \(problem)"))
            return
        }
        let lane = current.lanes[Bridge.lane(of: device, among: current.lanes.count)]
        lane.submit(Inbound(route: route, device: device, message: message, arrival: arrival))
    }

    /// Counts, logs and reports a message refused for its topic (before any device has it).
    private func refuse(_ message: MQTTMessage, _ error: InputError) {
        let topic = String(message.topic.prefix(200))
        counters.count(error)
        logger.warning("refused the message on \(topic): \(error)")
        publisher.send(messages.error(error, topic: topic, device: nil))
    }

    /// The lane of `device`: a stable hash, so a device always lands on the same one.
    static func lane(of device: String, among count: Int) -> Int {
        Int(StableHash.fnv1a(device) % UInt64(count))
    }
}
