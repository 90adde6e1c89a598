import Foundation
import GeotifyTestSupport

/// The positions of a `ShardCluster`'s devices, one step every `interval` seconds on a
/// thread of their own, each device at home on odd steps and away on even ones: time
/// passing in the traffic, for a test in which a shard must miss some of it. The pacing
/// is the traffic's (a tracker reports every so often), not a wait for something to
/// happen: tests wait for the steps (`waitFor(step:)`).
final class Traffic {
    /// The last step published, -1 before the first.
    private let progress: Progress

    /// What the publishing thread tells the test.
    private final class Progress: @unchecked Sendable {
        private let lock = NSLock()
        private var step = -1
        private var finished = false

        var state: (step: Int, finished: Bool) { lock.withLock { (step, finished) } }
        func published(_ step: Int, last: Bool) { lock.withLock { (self.step, finished) = (step, last) } }
    }

    init(cluster: ShardCluster, steps: Int, interval: Double) {
        let progress = Progress()
        self.progress = progress
        let thread = Thread {
            for step in 0..<steps {
                let started = Date()
                try? cluster.publish(step: step) { _ in step % 2 == 1 ? .home : .away }
                progress.published(step, last: step == steps - 1)
                if step < steps - 1 { Thread.sleep(until: started.addingTimeInterval(interval)) }
            }
        }
        thread.start()
    }

    /// The last step published.
    var published: Int { progress.state.step }

    /// Waits (up to 60 s) until `step` is published.
    func waitFor(step: Int) -> Bool {
        waitUntil(timeout: 60) { progress.state.step >= step }
    }

    /// Waits (up to 60 s) until every step is published.
    func waitUntilDone() -> Bool {
        waitUntil(timeout: 60) { progress.state.finished }
    }
}
