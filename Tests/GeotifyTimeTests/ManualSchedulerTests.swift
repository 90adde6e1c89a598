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

    /// Work due at the same time runs in the order it was scheduled, and work that work
    /// schedules for that same time runs after what was already due then.
    @Test func workDueAtOneTimeRunsInTheOrderItWasScheduled() {
        let clock = ManualScheduler()
        let log = Mutex<[String]>([])
        for name in ["first", "second", "third"] {
            clock.schedule(after: 1, on: queue) {
                log.withLock { $0.append(name) }
                if name == "first" { clock.schedule(after: 0, on: queue) { log.withLock { $0.append("made by first") } } }
            }
        }
        clock.advance(by: 1)
        #expect(log.withLock { $0 } == ["first", "second", "third", "made by first"])
    }

    /// Work due exactly where a step ends runs in that step, also at the end of each of
    /// several steps and when one step passes several deadlines.
    @Test func workDueExactlyAtTheEndOfAStepRunsInIt() {
        let clock = ManualScheduler()
        let ran = Mutex<[Double]>([])
        for due in [1.0, 2, 3, 5] {
            clock.schedule(after: due, on: queue) { ran.withLock { $0.append(clock.uptime) } }
        }
        clock.advance(by: 1)
        #expect(ran.withLock { $0 } == [1])
        clock.advance(by: 1)
        #expect(ran.withLock { $0 } == [1, 2])
        clock.advance(by: 3)
        #expect(ran.withLock { $0 } == [1, 2, 3, 5])
        #expect(clock.pendingCount == 0)
    }

    /// A negative delay is no delay: the work is due now, after work already due now,
    /// never in the past.
    @Test func aNegativeDelayIsNoDelay() {
        let clock = ManualScheduler()
        let log = Mutex<[String]>([])
        clock.schedule(after: 0, on: queue) { log.withLock { $0.append("now") } }
        clock.schedule(after: -5, on: queue) { log.withLock { $0.append("negative") } }
        #expect(clock.waiting == [.init(scheduled: 0, due: 0), .init(scheduled: 0, due: 0)])
        clock.advance(by: 0)
        #expect(log.withLock { $0 } == ["now", "negative"])
    }

    /// `pendingCount` counts only what will run: a cancelled run no longer counts, even
    /// before the clock has moved and dropped it.
    @Test func aCancelledRunNoLongerCountsAsPending() {
        let clock = ManualScheduler()
        clock.schedule(after: 1, on: queue) {}
        clock.schedule(after: 2, on: queue) {}.cancel()
        #expect(clock.pendingCount == 1)
        #expect(clock.heldCount == 2)
    }

    /// Repeating work that cancels its own handle while it runs leaves nothing waiting:
    /// the next run, scheduled just after, goes with it.
    @Test func repeatingWorkThatCancelsItselfLeavesNothingWaiting() {
        let clock = ManualScheduler()
        let count = Mutex(0)
        let handle = Mutex<ScheduledWork?>(nil)
        handle.withLock { slot in
            slot = clock.repeating(every: 1, on: queue) {
                let runs = count.withLock { count in
                    count += 1
                    return count
                }
                if runs == 3 { handle.withLock { $0 }?.cancel() }
            }
        }
        clock.advance(by: 3)
        #expect(count.withLock { $0 } == 3)
        #expect(clock.pendingCount == 0)
        clock.advance(by: 10)
        #expect(count.withLock { $0 } == 3)
    }

    /// The system's clock does not run cancelled work: a run cancelled before it ran is
    /// skipped, and a later one on the same queue still runs. The queue is held until
    /// the cancel is made, so however slow the machine, the cancel comes first.
    @Test func systemSchedulerDoesNotRunCancelledWork() {
        let clock = SystemScheduler()
        let ran = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        queue.suspend()
        clock.schedule(after: 0.01, on: queue) { ran.withLock { $0.append("cancelled") } }.cancel()
        clock.schedule(after: 0.02, on: queue) {
            ran.withLock { $0.append("kept") }
            done.signal()
        }
        queue.resume()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(ran.withLock { $0 } == ["kept"])
    }
}
