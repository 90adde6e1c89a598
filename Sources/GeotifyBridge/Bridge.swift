import Dispatch
import Foundation
import GeotifyCore
import GeotifyMQTT
import GeotifyStore
import Synchronization

/// The running bridge: subscribes to positions and commands, evaluates each device's
/// fences on its lane, and publishes notifications, badges, status and errors.
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
    private let publisher: Publisher
    private let book = Mutex(FenceBook())
    private let running = Mutex<Running?>(nil)

    /// What exists only while the bridge runs.
    private struct Running: Sendable {
        let client: MQTTClient
        let store: StateStore
        let lanes: [Lane]
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
        publisher = Publisher(logger: logger, counters: counters)
    }

    /// The fences in force.
    public var fenceBook: FenceBook { book.withLock { $0 } }

    /// Loads the fences and the state, then connects (in the background; the broker may
    /// come later). Throws when the fence file does not validate, the state directory
    /// is unusable or the MQTT options are refused.
    public func start() throws(StartupError) {
        let file = FenceFile(path: settings.fencesPath, limits: settings.limits)
        let loaded = file.load()
        for warning in loaded.warnings { logger.warning("\(warning)") }
        guard let loadedBook = loaded.book else {
            throw StartupError(["the fence file \(settings.fencesPath) is not valid:"] + loaded.errors.map { "  \($0)" })
        }
        let store: StateStore
        let states: [String: DeviceState]
        let pending: [StateStore.PendingMessage]
        let revisedBook: FenceBook
        do {
            store = try StateStore(directory: settings.stateDirectory, durability: settings.durability)
            let revisions = try store.loadRevisions()
            revisedBook = loadedBook.revised(knownRevisions: revisions.known, currentRevision: revisions.current)
            try store.saveRevisions(of: revisedBook)
            states = try store.loadDevices()
            pending = try store.pendingMessages()
        } catch {
            throw StartupError(["cannot use the state directory \(settings.stateDirectory): \(error)"])
        }
        book.withLock { $0 = revisedBook }

        let environment = Lane.Environment(
            settings: settings, decoder: LocationDecoder(maximumPayloadBytes: settings.maximumPayloadBytes),
            messages: messages, store: store, publisher: publisher, counters: counters, logger: logger,
            book: { [weak self] in self?.fenceBook ?? FenceBook() })
        let laneCount = max(1, settings.lanes)
        var laneStates = Array(repeating: [String: DeviceState](), count: laneCount)
        for (device, state) in states { laneStates[Bridge.lane(of: device, among: laneCount)][device] = state }
        let lanes = laneStates.enumerated().map { Lane(index: $0.offset, states: $0.element, environment: environment) }

        var options = MQTTOptions(clientID: settings.clientID, host: settings.broker.host, port: settings.broker.port)
        options.cleanSession = false
        options.keepAlive = settings.keepAlive
        options.will = MQTTWill(topic: topics.status, payload: Array("offline".utf8), qos: 1, retain: true)
        if settings.broker.tls { options.tls = MQTTTLS() }
        let client: MQTTClient
        do {
            client = try MQTTClient(options: options) { [weak self] event in self?.handle(event) }
        } catch {
            throw StartupError(["cannot set up the MQTT client: \(error)"])
        }
        publisher.attach(client)

        do {
            running.withLock {
                $0 = Running(
                    client: client, store: store, lanes: lanes,
                    ownTracks: try! TopicFilter(settings.ownTracksTopic), location: try! TopicFilter(settings.locationTopic),
                    commands: try! TopicFilter(topics.commands))
            }
            scheduleOutboxFlush(store)
            for message in pending { publisher.send(message.message, outboxID: message.id) }
            if !pending.isEmpty { logger.info("resending \(pending.count) unacknowledged messages from the outbox") }
            try client.start()
        } catch {
            throw StartupError(["cannot connect to \(settings.broker): \(error)"])
        }
        logger.info("started: \(revisedBook.fenceCount) fences for \(revisedBook.devices.count) devices, \(states.count) devices with state, \(laneCount) lanes; broker \(settings.broker)")
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
        publisher.flushAcknowledged(to: current.store)
        current.client.stop()
        logger.info("stopped")
        running.withLock { $0 = nil }
    }

    /// Blocks until every message received so far has been evaluated (for tests and
    /// orderly shutdown).
    public func waitUntilIdle() {
        running.withLock { $0 }?.lanes.forEach { $0.waitUntilIdle() }
    }

    /// Every 200 ms while running, removes acknowledged messages from the outbox.
    private func scheduleOutboxFlush(_ store: StateStore) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + .milliseconds(200)) { [weak self] in
            guard let self, self.running.withLock({ $0?.stopping == false }) else { return }
            self.publisher.flushAcknowledged(to: store)
            self.scheduleOutboxFlush(store)
        }
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
            logger.info("connected to \(settings.broker) (session \(sessionPresent ? "resumed" : "new"))")
            do {
                for filter in [settings.ownTracksTopic, settings.locationTopic, topics.commands] {
                    try current.client.subscribe(filter, qos: 1)
                }
            } catch {
                logger.error("could not subscribe: \(error)")
            }
            publisher.send(OutboxMessage(topic: topics.status, payload: Array("online".utf8), qos: 1, retain: true))
            publisher.connected()
        case .connectionRefused(let code, let reason):
            counters.add("errors.connection_refused")
            logger.error("the broker \(settings.broker) refused the connection: \(reason) (code \(code))")
        case .disconnected(let code, let reason):
            if code != 0 { logger.warning("lost the connection to \(settings.broker): \(reason); reconnecting") }
        case .subscribed(_, let granted):
            if granted.contains(where: { $0 >= 128 }) {
                counters.add("errors.subscription_refused")
                logger.error("the broker refused a subscription (granted QoS \(granted)); check its ACL")
            }
        }
    }

    private func route(_ message: MQTTMessage, _ current: Running) {
        counters.add("messages_received")
        let arrival = now()
        let routed: (Inbound.Route, String)?
        if let device = current.ownTracks.device(in: message.topic) {
            routed = (.location(.ownTracks), device)
        } else if let device = current.location.device(in: message.topic) {
            routed = (.location(.plain), device)
        } else if let device = current.commands.device(in: message.topic) {
            routed = (.command, device)
        } else {
            routed = nil
        }
        guard let (route, device) = routed else {
            counters.add("messages_unrouted")
            return
        }
        if let problem = Identifier.problem(device: device) {
            let error = InputError(.invalidTopic, "no usable device in the topic: \(problem)")
            counters.count(error)
            logger.warning("refused the message on \(message.topic): \(error)")
            publisher.send(messages.error(error, topic: message.topic, device: nil))
            return
        }
        let lane = current.lanes[Bridge.lane(of: device, among: current.lanes.count)]
        lane.submit(Inbound(route: route, device: device, message: message, arrival: arrival))
    }

    /// The lane of `device`: a stable hash (FNV-1a), so a device always lands on the same one.
    static func lane(of device: String, among count: Int) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in device.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return Int(hash % UInt64(count))
    }
}
