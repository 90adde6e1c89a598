import Foundation
import GeotifyTestSupport

/// The positions of a `ShardCluster`'s devices, step by step on a thread of their own,
/// each device at home on odd steps and away on even ones: traffic that keeps flowing
/// while a test does something to a shard. The next step is sent once `handled(step)`
/// says the last one went through (the reference bridge published its notifications),
/// so the traffic is paced by the bridges, not by the clock; tests wait for the steps
/// (`waitFor(step:)`). It can hold before one step until the test resumes it, so that
/// the test acts (kills a shard) exactly between two steps.
final class Traffic {
    private let progress: Progress

    /// What the publishing thread tells the test.
    private final class Progress: @unchecked Sendable {
        private let lock = NSLock()
        private var step = -1
        private var finished = false
        private var holding = false
        private var resumed = false

        var state: (step: Int, finished: Bool) { lock.withLock { (step, finished) } }
        func published(_ step: Int, last: Bool) { lock.withLock { (self.step, finished) = (step, last) } }
        var isHolding: Bool { lock.withLock { holding } }
        var isResumed: Bool { lock.withLock { resumed } }
        func hold() { lock.withLock { holding = true } }
        func resume() { lock.withLock { resumed = true } }
    }

    /// Sends `steps` steps; after each, waits (up to 30 s) until `handled` says it went
    /// through, and stops there if it does not (the test's waits then fail). Before step
    /// `holdBefore` it holds until `resume()` (up to 60 s).
    init(cluster: ShardCluster, steps: Int, holdBefore: Int? = nil, handled: @escaping @Sendable (Int) -> Bool) {
        let progress = Progress()
        self.progress = progress
        let thread = Thread {
            for step in 0..<steps {
                if step == holdBefore {
                    progress.hold()
                    guard waitUntil(timeout: 60, { progress.isResumed }) else { return }
                }
                guard (try? cluster.publish(step: step) { _ in step % 2 == 1 ? .home : .away }) != nil else { return }
                guard waitUntil(timeout: 30, { handled(step) }) else { return }
                progress.published(step, last: step == steps - 1)
            }
        }
        thread.start()
    }

    /// Waits (up to 60 s) until `step` went through.
    func waitFor(step: Int) -> Bool {
        waitUntil(timeout: 60) { progress.state.step >= step }
    }

    /// Waits (up to 60 s) until the traffic holds before its `holdBefore` step, every
    /// step before it having gone through.
    func waitUntilHolding() -> Bool {
        waitUntil(timeout: 60) { progress.isHolding }
    }

    /// Lets the traffic go on past its `holdBefore` step.
    func resume() {
        progress.resume()
    }

    /// Waits (up to 60 s) until every step went through.
    func waitUntilDone() -> Bool {
        waitUntil(timeout: 60) { progress.state.finished }
    }
}
