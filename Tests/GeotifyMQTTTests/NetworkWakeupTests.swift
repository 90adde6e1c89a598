import Testing
@testable import GeotifyMQTT
#if canImport(Glibc)
import Glibc
#endif

/// The pipe that wakes the network loop when another thread has queued something for it
/// to write (a publish, a subscription): without the wake-up, what was queued waits for
/// the loop's next timeout, half a second.
@Suite("NetworkWakeup")
struct NetworkWakeupTests {
    /// Whether the loop's poll would find the pipe readable now (a poll that does not wait).
    private static func isReadable(_ wakeup: NetworkWakeup) -> Bool {
        var descriptor = pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) == 1 && descriptor.revents & Int16(POLLIN) != 0
    }

    /// A signal makes the pipe readable, so the loop's poll returns; draining it makes it
    /// quiet again, however many signals came (more than one read's 256 bytes).
    @Test func aSignalWakesThePollAndADrainQuietsIt() {
        let wakeup = NetworkWakeup()
        #expect(wakeup.descriptor >= 0)
        #expect(!Self.isReadable(wakeup))
        wakeup.signal()
        #expect(Self.isReadable(wakeup))
        wakeup.drain()
        #expect(!Self.isReadable(wakeup))
        for _ in 0..<1_000 { wakeup.signal() }
        wakeup.drain()
        #expect(!Self.isReadable(wakeup), "a drain leaves no wake-up behind")
    }

    /// Neither end may block the loop or a publisher: a drain of an empty pipe, or a
    /// signal to a full one (64 KiB of wake-ups no loop has read yet), returns at once.
    /// Both ends are non-blocking, and closed in a child process the bridge starts.
    @Test func bothEndsAreNonBlockingAndClosedOnExec() throws {
        let wakeup = NetworkWakeup()
        let flags = fcntl(wakeup.descriptor, F_GETFL)
        // Required: a blocking pipe would hang the rest of the test.
        try #require(flags >= 0 && flags & O_NONBLOCK != 0)
        #expect(fcntl(wakeup.descriptor, F_GETFD) & FD_CLOEXEC != 0)
        wakeup.drain()
        for _ in 0..<70_000 { wakeup.signal() }
        wakeup.drain()
        #expect(!Self.isReadable(wakeup))
    }
}
