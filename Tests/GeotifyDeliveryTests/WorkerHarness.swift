import Foundation
import GeotifyCore
import GeotifyDelivery
import GeotifyStore
import GeotifyTestSupport
import GeotifyTime
import Synchronization

/// A delivery worker over a fresh state database, driven by a `ManualScheduler`, with its
/// reports collected: what each worker test starts from.
final class WorkerHarness: Sendable {
    let directory: URL
    let queue: DeliveryQueue
    let scheduler = ManualScheduler(now: Samples.now)
    let worker: DeliveryWorker
    private let collected = Collected()

    init(targets: [Target], directory: URL? = nil, schedule: RetrySchedule = RetrySchedule()) throws {
        let directory = try directory ?? makeTemporaryDirectory("delivery")
        self.directory = directory
        queue = try DeliveryQueue(path: directory.appendingPathComponent("state.sqlite").path)
        let collected = collected
        worker = DeliveryWorker(
            queue: queue, targets: targets, scheduler: scheduler, schedule: schedule, random: { 0.5 },
            report: { report in collected.reports.withLock { $0.append(report) } })
    }

    var reports: [DeliveryReport] { collected.reports.withLock { $0 } }

    /// Queues `notifications` for `target` now and wakes the worker.
    func enqueue(_ notifications: [GeotifyCore.Notification], for target: String) throws {
        try queue.enqueue(notifications.map { Samples.entry(target: target, $0) }, at: scheduler.now)
        worker.wake()
    }

    /// Waits until no attempt is under way (and what finished has been recorded).
    @discardableResult
    func settle(timeout: Double = 20) -> Bool {
        waitUntil(timeout: timeout) { worker.attemptsUnderWay == 0 }
    }

    /// Advances the clock by `seconds`, then waits for the attempts that started to end.
    func advance(by seconds: Double) {
        scheduler.advance(by: seconds)
        settle()
    }

    func counts(_ target: String) throws -> DeliveryCounts {
        try queue.counts().first { $0.target == target } ?? DeliveryCounts(target: target)
    }
}

/// The reports a worker made, shared with its report closure.
private final class Collected: Sendable {
    let reports = Mutex<[DeliveryReport]>([])
}
