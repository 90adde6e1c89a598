import Foundation
import Dispatch

/// Runs the same work on several threads at once, as the bridge's lanes do, each lane
/// with its own devices and state.
enum Parallel {
    /// What one lane did and when: its own start and end on the monotonic clock.
    struct LaneResult<Value: Sendable>: Sendable {
        var value: Value
        var items: Int
        var start: Double
        var end: Double
    }

    /// Runs `body(lane)` on `lanes` threads. Each lane prepares (untimed), waits for all
    /// lanes to be ready, then runs its timed part; `body` returns the items it did and
    /// its result. The throughput counts all lanes' items over the time from the first
    /// lane's start to the last lane's end.
    static func run<Value: Sendable>(
        lanes: Int,
        _ body: @escaping @Sendable (_ lane: Int, _ ready: @Sendable () -> Void) -> (items: Int, value: Value)
    ) -> (throughput: Throughput, values: [Value]) {
        let arrived = Locked(0)
        let results = Locked<[Int: LaneResult<Value>]>([:])
        let group = DispatchGroup()
        for lane in 0..<lanes {
            group.enter()
            Thread.detachNewThread {
                let startTime = Locked(0.0)
                let ready: @Sendable () -> Void = {
                    arrived.withLock { $0 += 1 }
                    while arrived.value < lanes {}
                    let now = BenchClock.now()
                    startTime.withLock { $0 = now }
                }
                let (items, value) = body(lane, ready)
                let end = BenchClock.now()
                let start = startTime.value
                results.withLock { $0[lane] = LaneResult(value: value, items: items, start: start, end: end) }
                group.leave()
            }
        }
        group.wait()
        let all = results.value.sorted { $0.key < $1.key }.map(\.value)
        let start = all.map(\.start).min() ?? 0
        let end = all.map(\.end).max() ?? 0
        return (Throughput(items: all.reduce(0) { $0 + $1.items }, seconds: end - start), all.map(\.value))
    }
}
