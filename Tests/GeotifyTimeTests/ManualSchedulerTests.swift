import Dispatch
import Synchronization
import Testing
@testable import GeotifyTime

@Suite struct ManualSchedulerTests {
    let queue = DispatchQueue(label: "test")

    @Test func runsWorkWhenItFallsDueInOrder() {
        let clock = ManualScheduler(now: 100)
        let log = Mutex<[String]>([])
        clock.schedule(after: 2, on: queue) { log.withLock { $0.append("two at \(clock.uptime)") } }
        clock.schedule(after: 1, on: queue) { log.withLock { $0.append("one at \(clock.uptime)") } }
        clock.advance(by: 0.5)
        #expect(log.withLock { $0 }.isEmpty)
        clock.advance(by: 2)
        #expect(log.withLock { $0 } == ["one at 1.0", "two at 2.0"])
        #expect(clock.now == 102.5)
        #expect(clock.uptime == 2.5)
    }

    /// A negative step moved `now` and `uptime` back, which `uptime` (monotonic) must
    /// never do; it stops the test with a message instead (run in a child process).
    @Test func aNegativeStepIsAPreconditionFailure() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            ManualScheduler().advance(by: -1)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("ManualScheduler.advance(by: -1.0): the clock only moves forward"), "\(message)")
        let clock = ManualScheduler()
        clock.advance(by: 0)
        #expect(clock.uptime == 0, "a step of 0 is fine")
    }

    @Test func cancelledWorkDoesNotRun() {
        let clock = ManualScheduler()
        let ran = Mutex(false)
        let handle = clock.schedule(after: 1, on: queue) { ran.withLock { $0 = true } }
        handle.cancel()
        clock.advance(by: 5)
        #expect(!ran.withLock { $0 })
        #expect(clock.pendingCount == 0)
    }

    /// Work that reschedules itself and cancels what it scheduled before (a delivery
    /// worker's wake-ups) leaves cancelled runs far ahead; the clock drops them as it
    /// steps, rather than scan them at every step until they fall due (a day of such a
    /// clock took minutes).
    @Test func cancelledWorkIsDroppedAsTheClockSteps() {
        let clock = ManualScheduler()
        for _ in 0..<1_000 { clock.schedule(after: 86_400, on: queue) {}.cancel() }
        clock.schedule(after: 1, on: queue) {}
        #expect(clock.heldCount == 1_001)
        clock.advance(by: 2)
        #expect(clock.heldCount == 0)
    }

    /// Each waiting run says when it was scheduled as well as when it falls due: work
    /// scheduled while the clock moves (here by work that runs; in a test, as often by
    /// another thread) is timed from where the clock stood then, not from where it ends.
    @Test func waitingRunsSayWhenTheyWereScheduledAndWhenTheyFallDue() {
        let clock = ManualScheduler()
        clock.schedule(after: 2, on: queue) {}
        clock.schedule(after: 0.5, on: queue) { clock.schedule(after: 1, on: queue) {} }
        clock.schedule(after: 3, on: queue) {}.cancel()
        #expect(clock.waiting == [.init(scheduled: 0, due: 0.5), .init(scheduled: 0, due: 2)])
        clock.advance(by: 1)
        #expect(clock.waiting == [.init(scheduled: 0.5, due: 1.5), .init(scheduled: 0, due: 2)])
        #expect(clock.waiting.map(\.delay) == [1, 2])
    }

    @Test func repeatingWorkRunsEveryIntervalUntilCancelled() {
        let clock = ManualScheduler()
        let count = Mutex(0)
        let handle = clock.repeating(every: 0.2, on: queue) { count.withLock { $0 += 1 } }
        clock.advance(by: 1.0)
        #expect(count.withLock { $0 } == 5)
        handle.cancel()
        clock.advance(by: 1.0)
        #expect(count.withLock { $0 } == 5)
    }

    @Test func systemSchedulerRunsDelayedWorkAndItsClocksMove() {
        let clock = SystemScheduler()
        let start = clock.uptime
        let done = DispatchSemaphore(value: 0)
        clock.schedule(after: 0.01, on: queue) { done.signal() }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(clock.uptime > start)
        #expect(clock.now > 1_700_000_000)
    }
}
