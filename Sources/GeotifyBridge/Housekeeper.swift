import Dispatch
import GeotifyCore
import GeotifyMQTT
import GeotifyStore
import GeotifyTime
import Synchronization

/// The bridge's housekeeping for one run, a round every `tickInterval` on its queue: the
/// lanes' timers; every second the fence file, the outbox marks and, while the broker is
/// away, a reminder every 30 s; the statistics every `statsInterval`; the last fixes
/// every few seconds.
///
/// Apart from the bridge, with what a round uses, so that the timer holds this and never
/// the bridge: a timer that held the bridge (even weakly: a weak reference is made strong
/// for the round) could hold its last reference, and the bridge's `deinit` would then run
/// at the round's end on the housekeeping queue and wait there for that very queue.
final class Housekeeper: Sendable {
    /// How often the lanes' timers are looked at, in seconds.
    static let tickInterval = 0.2
    /// Every this many ticks the fence file is looked at (1 s).
    private static let pollEvery = 5
    /// Every this many polls its contents are read too, not only its size and time.
    private static let readContentsEvery = 10
    /// Every this many ticks the lanes start saving the last fixes kept only in memory, a
    /// share at each tick (5 s).
    private static let saveFixesEvery = 25
    /// The most acknowledged outbox rows deleted at a tick (5 120 a second: more than the
    /// bridge publishes), so that the deletion never holds the lanes' commits for long.
    private static let prunedPerTick: Int64 = 1_024

    /// What the rounds remember between them.
    private struct Rounds {
        var count = 0
        var lastReport: Double
        var lastWaitingNote: Double
    }

    /// What the bridge's run hands over.
    struct Parts: Sendable {
        let lanes: [Lane]
        let store: StateStore
        let fences: LiveFenceBook
        let announcer: FenceChangeAnnouncer
        let client: MQTTClient
        let publisher: Publisher
        let reports: BridgeReports
        let shardOccupancy: ShardOccupancy
        let counters: Counters
        let logger: Logger
        let scheduler: any Scheduler
        let topics: Topics
        let settings: Settings
        /// When the run started, on the monotonic clock.
        let started: Double
    }

    private let parts: Parts
    private let queue: DispatchQueue
    private let rounds: Mutex<Rounds>
    /// Set by `end()`: a round that begins after it does nothing.
    private let ended = Atomic(false)

    /// Housekeeping of the run `parts`, whose rounds run on `queue`.
    init(_ parts: Parts, queue: DispatchQueue) {
        self.parts = parts
        self.queue = queue
        rounds = Mutex(Rounds(lastReport: parts.started, lastWaitingNote: parts.started))
    }

    /// Rounds every `tickInterval` on the queue, until `end()` or the work is cancelled.
    func start() -> ScheduledWork {
        parts.scheduler.repeating(every: Self.tickInterval, on: queue) { [self] in round() }
    }

    /// No round begins after this; waits for one under way. Not on the queue itself.
    func end(_ work: ScheduledWork) {
        dispatchPrecondition(condition: .notOnQueue(queue))
        ended.store(true, ordering: .releasing)
        work.cancel()
        queue.sync {}
    }

    private func round() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !ended.load(ordering: .acquiring) else { return }
        let parts = parts
        let now = parts.scheduler.uptime
        let (round, lastReport, lastWaitingNote) = rounds.withLock { rounds in
            rounds.count += 1
            return (rounds.count, rounds.lastReport, rounds.lastWaitingNote)
        }
        for lane in parts.lanes { lane.tick(startSavingFixes: round % Self.saveFixesEvery == 0) }
        parts.reports.logSummaries(at: now)
        parts.shardOccupancy.settle(queue: parts.publisher.queue)
        parts.publisher.pump()
        _ = try? parts.store.pruneAcknowledged(atMost: Self.prunedPerTick)
        if round % Self.pollEvery == 0 {
            let readContents = round % (Self.pollEvery * Self.readContentsEvery) == 0
            if let change = parts.fences.reloadIfChanged(readContents: readContents) { parts.announcer.announce(change) }
            parts.publisher.saveMarks()
            // Messages held back because their hand-over mark could not be written go
            // once it can, even when nothing else comes to pump.
            parts.publisher.pump()
            if !parts.client.isConnected && now - lastWaitingNote >= 30 {
                parts.logger.warning("still waiting for the broker \(parts.settings.broker) (\(Int(now - parts.started)) s since the start); positions wait in the broker meanwhile")
                rounds.withLock { $0.lastWaitingNote = now }
            }
        }
        // Half a tick of slack: ticks come every `tickInterval`, and adding it up in
        // floating point must not push a report to the tick after.
        if parts.settings.statsInterval > 0 && now - lastReport >= parts.settings.statsInterval - Self.tickInterval / 2 {
            parts.publisher.send(statistics().message(topics: parts.topics))
            rounds.withLock { $0.lastReport = now }
        }
    }

    /// The statistics now: counters, devices, fences, and the lanes' latencies since the
    /// last report.
    private func statistics() -> StatsReport {
        var devices = 0
        var latency = LatencyHistogram()
        for lane in parts.lanes {
            let statistics = lane.statistics()
            devices += statistics.devices
            latency.merge(statistics.latency)
        }
        let scheduler = parts.scheduler
        return StatsReport(
            time: scheduler.now.rounded(.down), uptime: (scheduler.uptime - parts.started).rounded(.down), devices: devices,
            fences: parts.fences.book.fenceCount, pending: parts.publisher.pending, counters: parts.counters.snapshot,
            latency: latency.summary)
    }
}
