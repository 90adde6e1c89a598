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

    package var isRecursive: Bool { true }

    package func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else {
            try await function()
            return
        }
        // The slot is taken and given back on the test's own thread: a test that ends
        // frees its slot at once, even while both cooperative threads are busy (given
        // back after `withTaskExecutorPreference`, it waited for one of them, and
        // finished tests held every slot for up to 18 s of a 44 s run).
        try await withTaskExecutorPreference(ThreadExecutor()) {
            await WaitingTest.slots.acquire()
            defer { WaitingTest.slots.release() }
            try await function()
        }
    }

    private static let slots = Slots(limit)
}

extension Trait where Self == WaitingTest {
    /// Runs each test on a thread of its own (see `WaitingTest`).
    package static var waiting: Self { WaitingTest() }
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
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(_ count: Int) {
        state = Mutex(State(free: count))
    }

    func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                guard state.free > 0 else {
                    state.waiting.append(continuation)
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
            guard !state.waiting.isEmpty else {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}
