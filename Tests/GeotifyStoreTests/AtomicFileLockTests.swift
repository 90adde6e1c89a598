import Foundation
import GeotifyStore
import GeotifyTestSupport
import Synchronization
import Testing

/// How many times the test's SIGVTALRM handler ran: a handler installed with
/// `sigaction` is a C function and captures nothing, so the count is a global.
private let interruptions = Atomic<Int>(0)

/// The lock cooperating writers take on a file's directory (`AtomicFile.withLock(on:)`):
/// a writer waits for another that holds it, and a wait cut short by a signal is waited
/// again, not taken for a failure to lock.
@Suite("The lock of a file's directory")
struct AtomicFileLockTests {
    let directory = TemporaryDirectory()

    /// A signal whose handler does not ask for interrupted calls to be restarted (no
    /// `SA_RESTART`, as a program embedding the store may install) ends a waiting
    /// `flock` with `EINTR`. The waiter goes on waiting and runs its body once the
    /// holder lets go. The signal (SIGVTALRM, which nothing here uses) goes to the waiting
    /// thread alone, once it waits (/proc/locks lists it), and its old handler is put
    /// back.
    @Test func aWaitInterruptedByASignalGoesOnWaiting() throws {
        let root = directory.path
        try FileManager.default.createDirectory(atPath: root + "/devices", withIntermediateDirectories: true)
        let holder = try DirectoryLockHolder(fenceDirectory: root)

        _ = interruptions.load(ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in interruptions.add(1, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        var previous = sigaction()
        try #require(sigaction(SIGVTALRM, &action, &previous) == 0)
        defer { sigaction(SIGVTALRM, &previous, nil) }

        let waiter = Mutex<pthread_t?>(nil)
        let outcome = Mutex<Result<Int, StoreError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGVTALRM)
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
            waiter.withLock { $0 = pthread_self() }
            let result = Result { () throws(StoreError) -> Int in
                try AtomicFile.withLock(on: root + "/devices/.lock") { () throws(StoreError) -> Int in 42 }
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        thread.start()

        #expect(waitUntil { holder.hasWaiter }, "the writer waits for the lock")
        let before = interruptions.load(ordering: .relaxed)
        let target = try #require(waiter.withLock { $0 })
        #expect(pthread_kill(target, SIGVTALRM) == 0)
        #expect(waitUntil { interruptions.load(ordering: .relaxed) > before }, "the signal was handled")
        _ = waitUntil { holder.hasWaiter || outcome.withLock { $0 != nil } }
        #expect(holder.hasWaiter, "the writer waits for the lock again")
        holder.release()

        #expect(done.wait(timeout: .now() + 30) == .success)
        let result = try #require(outcome.withLock { $0 })
        #expect(try result.get() == 42)
    }
}
