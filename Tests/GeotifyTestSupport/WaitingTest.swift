import Dispatch
import Synchronization
import Testing

/// A trait for tests that spend their time waiting: for a bridge, broker, browser or
/// script process, for a notification through mosquitto. Each runs on a thread of its
/// own instead of one of Swift concurrency's cooperative threads, of which there are as
/// many as cores (two here): a test blocked in a wait there keeps every other test
/// from running on that core, although the core itself sits idle or works for the
/// process the test waits for. At most `WaitingTest.limit` such tests run at once.
///
/// Every suite that waits on a broker, a bridge, a server or a process carries it, also
/// those whose tests are short: a blocking wait on a cooperative thread delays every test
/// queued behind it, including the start of the long waiting ones.
///
/// The test still runs in its own task (its expectations are recorded as usual); only
/// the executor its code runs on changes (`withTaskExecutorPreference`).
package struct WaitingTest: SuiteTrait, TestTrait, TestScoping {
    /// How many waiting tests run at once, beside the cooperative threads' tests.
    package static let limit = 6

    /// How long the test waits, which decides its place in the queue for a slot.
    enum Kind {
        case waiting
        /// Waiting for many seconds even alone: given a slot before the others.
        case longWaiting
    }

    let kind: Kind

    package var isRecursive: Bool { true }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // A test under a suite with the trait may carry it too (`.longWaiting` on one
        // test of a `.waiting` suite): it takes one slot, first in line if either says so.
        guard testCase != nil, !WaitingTest.inScope else {
            try await function()
            return
        }
        let long = test.traits.contains { ($0 as? WaitingTest)?.kind == .longWaiting }
        // The slot is taken and given back on the test's own thread: a test that ends
        // frees its slot at once, even while both cooperative threads are busy (given
        // back after `withTaskExecutorPreference`, it waited for one of them, and
        // finished tests held every slot for up to 18 s of a 44 s run).
        try await WaitingTest.$inScope.withValue(true) {
            try await withTaskExecutorPreference(ThreadExecutor()) {
                await WaitingTest.slots.acquire(first: long)
                defer { WaitingTest.slots.release() }
                try await function()
            }
        }
    }

    /// Whether the test runs in a scope of this trait already.
    @TaskLocal private static var inScope = false

    private static let slots = Slots(limit)
}

extension Trait where Self == WaitingTest {
    /// Runs each test on a thread of its own (see `WaitingTest`).
    package static var waiting: Self { WaitingTest(kind: .waiting) }

    /// `.waiting`, for a test that takes many seconds even alone (a walk through the
    /// README, a browser, a crash mid-stream): it gets a place before the other waiting
    /// tests, so that it starts early instead of ending the run alone.
    package static var longWaiting: Self { WaitingTest(kind: .longWaiting) }
}

/// Runs a task's jobs on a serial dispatch queue of its own, whose thread is not one of
/// the cooperative ones.
private final class ThreadExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "geotify.test.waiting")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// A counting semaphore whose `acquire` suspends the task instead of blocking a thread.
private final class Slots: Sendable {
    private struct State {
        var free: Int
        /// Those asking first, then the others, each in the order they asked.
        var first: [CheckedContinuation<Void, Never>] = []
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(_ count: Int) {
        state = Mutex(State(free: count))
    }

    /// Waits for a slot; with `first`, ahead of those asking without it.
    func acquire(first: Bool = false) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                guard state.free > 0 else {
                    if first {
                        state.first.append(continuation)
                    } else {
                        state.waiting.append(continuation)
                    }
                    return false
                }
                state.free -= 1
                return true
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if !state.first.isEmpty { return state.first.removeFirst() }
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
