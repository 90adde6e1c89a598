import Foundation
import GeotifyStore
import GeotifyTime
import Synchronization

/// Delivers what the queue holds: plans on a serial queue of its own (`DeliveryPlanner`),
/// performs each attempt on a thread of its own, records every outcome in the state
/// database before anything else, and plans again.
///
/// Nothing here runs on the bridge's lanes or its MQTT thread. An attempt blocks its
/// thread for up to the target's timeout, so attempts get threads of their own rather
/// than Dispatch's shared pool, where a few slow targets could take every thread; the
/// targets' concurrency limits bound how many there are. A slow or dead target thus holds
/// up only its own deliveries. Time comes from the injected `Scheduler`: with a
/// `ManualScheduler` a test drives back-off, `Retry-After` and the retry window without
/// waiting.
///
/// A delivery is removed from the queue as soon as its target acknowledges it, so a
/// restart never sends it again; one under way when the process dies is sent again after
/// the restart, with the same idempotency key. The worker also plans every
/// `pollInterval` seconds, which picks up dead letters put back by `geotify notify retry`
/// from another process.
package final class DeliveryWorker: @unchecked Sendable {
    private let queue: DeliveryQueue
    private let targets: [String: Target]
    private let limits: [String: TargetLimits]
    private let retryFor: [String: Double]
    private let transport: DeliveryTransport
    private let scheduler: Scheduler
    private let schedule: RetrySchedule
    private let pollInterval: Double
    private let random: @Sendable () -> Double
    private let report: @Sendable (DeliveryReport) -> Void
    /// Whether a wake's plan is waiting for the worker's queue.
    private let wakeWaiting = Atomic(false)
    /// The worker's own queue: every property below is touched only on it.
    private let worker = DispatchQueue(label: "geotify.delivery")

    private var traffic: [String: TargetTraffic] = [:]
    private var timer: ScheduledWork?
    private var poll: ScheduledWork?
    private var running = false

    /// A worker for `targets` over `queue`; `report` is called on the worker's queue.
    package init(
        queue: DeliveryQueue,
        targets: [Target],
        transport: DeliveryTransport = CurlTransport(),
        scheduler: Scheduler,
        schedule: RetrySchedule = RetrySchedule(),
        pollInterval: Double = 5,
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
        report: @escaping @Sendable (DeliveryReport) -> Void
    ) {
        self.queue = queue
        self.targets = Dictionary(targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        limits = self.targets.mapValues(\.limits)
        retryFor = self.targets.mapValues(\.retryFor)
        self.transport = transport
        self.scheduler = scheduler
        self.schedule = schedule
        self.pollInterval = pollInterval
        self.random = random
        self.report = report
    }

    /// Starts delivering what is queued, and polling; first deletes each target's dead
    /// letters past its `maximumDeadLetters`.
    package func start() {
        worker.async { [self] in
            guard !running else { return }
            running = true
            pruneDeadLetters()
            poll = scheduler.repeating(every: pollInterval, on: worker) { [self] in plan() }
            plan()
        }
    }

    /// Plans at once: call after committing new deliveries. Wakes that come while one is
    /// waiting for the worker's queue join it (its plan reads the queue after their
    /// commits), so a stream of commits never piles up plans, nor delays `stop()`.
    package func wake() {
        guard !wakeWaiting.exchange(true, ordering: .acquiringAndReleasing) else { return }
        worker.async { [self] in
            wakeWaiting.store(false, ordering: .releasing)
            plan()
        }
    }

    /// Stops starting attempts. Attempts under way finish (within their timeout) and
    /// their outcomes are still recorded. Not to be called from `report`, which runs on
    /// the worker's queue.
    package func stop() {
        worker.sync {
            running = false
            timer?.cancel()
            poll?.cancel()
            timer = nil
            poll = nil
        }
    }

    /// How many attempts are under way.
    package var attemptsUnderWay: Int {
        worker.sync { traffic.values.reduce(0) { $0 + $1.underWay.count } }
    }

    private func plan() {
        dispatchPrecondition(condition: .onQueue(worker))
        guard running else { return }
        let now = scheduler.now
        let heads: [DeliveryRow]
        do {
            heads = try queue.heads()
        } catch {
            report(.storeFailed("cannot read the delivery queue: \(error)"))
            return
        }
        let plan = DeliveryPlanner.plan(heads: heads, limits: limits, retryFor: retryFor, traffic: traffic, now: now)
        traffic = plan.traffic
        for row in plan.unknown {
            deadLetter(row, reason: "no target named \"\(row.entry.target)\" in the settings", at: now)
        }
        for row in plan.start {
            attempt(row, at: now)
        }
        timer?.cancel()
        timer = plan.wake.map { wake in
            scheduler.schedule(after: max(0, wake - now), on: worker) { [self] in self.plan() }
        }
    }

    private func attempt(_ row: DeliveryRow, at now: Double) {
        dispatchPrecondition(condition: .onQueue(worker))
        guard let target = targets[row.entry.target] else { return }
        let transport = transport
        let thread = Thread { [self] in
            let outcome = target.attempt(row.entry.payload, at: now, through: transport)
            worker.async { [self] in finish(row, of: target, with: outcome) }
        }
        thread.name = "geotify.delivery.\(target.name)"
        thread.start()
    }

    private func finish(_ row: DeliveryRow, of target: Target, with outcome: AttemptOutcome) {
        dispatchPrecondition(condition: .onQueue(worker))
        let now = scheduler.now
        let random = random()
        traffic[target.name, default: TargetTraffic()].finished(
            row.id, outcome, at: now, schedule: schedule, random: random, windowEnd: row.queued + target.retryFor)
        switch outcome {
        case .delivered:
            do {
                try queue.markDelivered(row.id)
                report(.delivered(target: target.name, eventID: row.entry.eventID, attempts: row.attempts + 1))
            } catch {
                report(.storeFailed("cannot record the delivery of \(row.entry.eventID) to \(target.name): \(error)"))
            }
        case .failed(let reason, let retryAfter):
            switch schedule.decide(row: row, retryFor: target.retryFor, reason: reason, retryAfter: retryAfter, now: now, random: random) {
            case .retry(let next):
                do {
                    try queue.scheduleRetry(row.id, at: next, error: reason, now: now)
                    report(.retrying(target: target.name, eventID: row.entry.eventID, attempts: row.attempts + 1, next: next, reason: reason))
                } catch {
                    report(.storeFailed("cannot record the failed attempt of \(row.entry.eventID) to \(target.name): \(error)"))
                }
            case .deadLetter(let reason):
                deadLetter(row, reason: reason, at: now)
            }
        case .rejected(let reason):
            deadLetter(row, reason: reason, at: now)
        }
        plan()
    }

    /// Deletes each target's oldest dead letters past its bound: a database kept from before
    /// the bounds, or a `maximumDeadLetters` lowered since, holds more than it allows, and
    /// otherwise would until the target's next dead letter.
    private func pruneDeadLetters() {
        dispatchPrecondition(condition: .onQueue(worker))
        for (name, target) in targets.sorted(by: { $0.key < $1.key }) {
            do {
                let pruned = try queue.pruneDeadLetters(target: name, keeping: target.bound.maximumDeadLetters)
                if pruned > 0 { report(.deadLettersPruned(target: name, count: pruned)) }
            } catch {
                report(.storeFailed("cannot delete the oldest dead letters of \(name): \(error)"))
            }
        }
    }

    private func deadLetter(_ row: DeliveryRow, reason: String, at now: Double) {
        dispatchPrecondition(condition: .onQueue(worker))
        let keeping = targets[row.entry.target]?.bound.maximumDeadLetters ?? DeliveryBound().maximumDeadLetters
        do {
            if let buried = try queue.moveToDeadLetters(row.id, reason: reason, at: now, keeping: keeping) {
                report(.deadLettered(target: row.entry.target, device: row.entry.device, eventID: row.entry.eventID, reason: reason))
                if buried.pruned > 0 { report(.deadLettersPruned(target: row.entry.target, count: buried.pruned)) }
            }
        } catch {
            report(.storeFailed("cannot move \(row.entry.eventID) to the dead letters of \(row.entry.target): \(error)"))
        }
    }
}
