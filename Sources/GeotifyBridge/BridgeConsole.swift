import GeotifyConsole
import GeotifyCore
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore
import GeotifyTime

/// The running bridge as the web console sees it (`ConsoleBackend`): the devices and
/// fences in force, commands and OwnTracks HTTP-mode positions handled on the device's
/// lane exactly as if they had come over MQTT, fence imports, health and metrics, and
/// the live updates the lanes report.
final class BridgeConsole: ConsoleBackend {
    private let lanes: [Lane]
    private let router: MessageRouter
    private let fences: LiveFenceBook
    private let announcer: FenceChangeAnnouncer
    private let client: MQTTClient
    private let broker: String
    private let stateHealth: StateHealth
    private let counters: Counters
    /// What it has not yet got acknowledged, for `/metrics`.
    private let publisher: Publisher
    private let updates: LiveUpdates
    private let scheduler: any Scheduler
    private let topics: Topics
    private let ownTracksTopic: OwnTracksTopics
    /// This instance's share of the devices, to name the one that owns another's device.
    private let shard: ShardAssignment?
    /// When the bridge started, on the monotonic clock.
    private let started: Double
    /// Counts and reports a message refused for its topic, as the bridge does one from
    /// the broker.
    private let refuse: @Sendable (InputError, String) -> Void

    init(
        lanes: [Lane], router: MessageRouter, fences: LiveFenceBook, announcer: FenceChangeAnnouncer, client: MQTTClient,
        settings: Settings, health: StateHealth, counters: Counters, publisher: Publisher, updates: LiveUpdates, scheduler: any Scheduler,
        started: Double, refuse: @escaping @Sendable (InputError, String) -> Void
    ) {
        self.lanes = lanes
        self.router = router
        self.fences = fences
        self.announcer = announcer
        self.client = client
        broker = settings.broker.description
        stateHealth = health
        self.counters = counters
        self.publisher = publisher
        self.updates = updates
        self.scheduler = scheduler
        topics = Topics(prefix: settings.topicPrefix)
        ownTracksTopic = OwnTracksTopics(filter: settings.ownTracksTopic)
        shard = settings.shard
        self.started = started
        self.refuse = refuse
    }

    func devices() -> [DeviceSnapshot] {
        lanes.flatMap { $0.snapshots() }.sorted { $0.device < $1.device }
    }

    func fenceBook() -> FenceBook {
        fences.book
    }

    func run(command payload: [UInt8], device: String, reply: @escaping @Sendable (JSON) -> Void) {
        let message = MQTTMessage(topic: "\(topics.prefix)/cmd/\(device)", payload: payload)
        switch router.route(message, arrival: scheduler.now) {
        case .lane(let index, let inbound):
            counters.add(.messagesReceived)
            lanes[index].handle(inbound) { outcome in
                if case .reply(let document) = outcome { reply(.object(document)) }
            }
        case .refused(let error, let topic):
            counters.add(.messagesReceived)
            refuse(error, topic)
            reply(["ok": false, "error": ["code": .string(error.code.rawValue), "message": .string(error.message)]])
        case .otherShard:
            let refusal = otherShard(device, sending: "commands")
            reply(["ok": false, "error": ["code": .string(refusal.code.rawValue), "message": .string(refusal.message)]])
        case .unrouted, .occupancy:
            reply(["ok": false, "error": ["code": .string(ErrorCode.invalidDevice.rawValue), "message": .string("no usable device \"\(device)\"")]])
        }
    }

    func publish(owntracks payload: [UInt8], user: String, device: String, reply: @escaping @Sendable (Result<[JSON], ConsoleRefusal>) -> Void) {
        guard let topic = ownTracksTopic.base(of: "\(user)/\(device)") else {
            reply(.failure(ConsoleRefusal(.invalidTopic, "\"\(user)/\(device)\" does not fit the OwnTracks topic filter \(ownTracksTopic.filter)")))
            return
        }
        switch router.route(MQTTMessage(topic: topic, payload: payload), arrival: scheduler.now) {
        case .lane(let index, let inbound):
            counters.add(.messagesReceived)
            lanes[index].handle(inbound) { outcome in
                switch outcome {
                case .refused(let error): reply(.failure(ConsoleRefusal(error.code, error.message)))
                case .accepted, .reply: reply(.success([]))
                }
            }
        case .refused(let error, _):
            counters.add(.messagesReceived)
            refuse(error, topic)
            reply(.failure(ConsoleRefusal(error.code, error.message)))
        case .otherShard:
            reply(.failure(otherShard("\(user)/\(device)", sending: "positions")))
        case .unrouted, .occupancy:
            reply(.failure(ConsoleRefusal(.invalidTopic, "\(topic) is not a topic the bridge reads positions from")))
        }
    }

    /// The refusal of a request about `device`, which another instance owns.
    private func otherShard(_ device: String, sending what: String) -> ConsoleRefusal {
        let whose = shard?.otherInstance(owning: device) ?? "\(device) belongs to another instance of the bridge"
        return ConsoleRefusal(.otherShard, "\(whose): send its \(what) there")
    }

    func importFences(_ plan: FenceImportPlan, reply: @escaping @Sendable (Result<FenceImportPlan.Outcome, ConsoleRefusal>) -> Void) {
        do {
            let outcome = try plan.write(to: fences.file)
            if let change = fences.reloadIfChanged(readContents: true) { announcer.announce(change) }
            reply(.success(outcome))
        } catch {
            reply(.failure(ConsoleRefusal(error.code, error.message)))
        }
    }

    func health() -> ConsoleHealth {
        let store = stateHealth.problem
        let file = fences.problem
        return ConsoleHealth(checks: [
            ConsoleHealth.Check(
                name: "broker", ok: client.isConnected,
                detail: client.isConnected ? "connected to \(broker)" : "not connected to \(broker)"),
            ConsoleHealth.Check(name: "store", ok: store == nil, detail: store ?? "the state database can be written"),
            ConsoleHealth.Check(name: "fences", ok: file == nil, detail: file ?? "the fence file \(fences.file.path) is in force"),
        ])
    }

    func metrics() -> ConsoleMetrics {
        var latency = LatencyHistogram()
        for lane in lanes { latency.merge(lane.latencySinceStart()) }
        let bounds = (0..<(LatencyHistogram.bucketCount - 1)).map(LatencyHistogram.upperBound(of:))
        return ConsoleMetrics(
            counters: counters.snapshot, devices: lanes.reduce(0) { $0 + $1.statistics(resetting: false).devices },
            fences: fences.book.fenceCount, uptime: (scheduler.uptime - started).rounded(.down), pending: publisher.pending,
            latency: ConsoleMetrics.Latency(
                upperBounds: bounds, counts: Array(latency.buckets.prefix(bounds.count)), count: latency.count, sum: latency.sum))
    }

    func observe(_ sink: @escaping @Sendable (ConsoleUpdate) -> Void) {
        updates.subscribe(sink)
    }
}
