@testable import GeotifyMQTT
import Testing

/// The pacing of immediate acknowledgements, checked as a pure value: the loop's
/// monotonic time is passed in, so no clock or socket is involved.
@Suite("AcknowledgementPacing")
struct AcknowledgementPacingTests {
    private let millisecond: UInt64 = 1_000_000

    /// `acknowledgeNow` outside `#expect`, which cannot call a mutating method itself.
    private func ask(_ pacing: inout AcknowledgementPacing, read: Bool, sent: Bool = false, at now: UInt64) -> Bool {
        pacing.acknowledgeNow(read: read, sent: sent, at: now)
    }

    @Test("the first read is acknowledged at once; a turn that read nothing owes nothing")
    func firstReadAtOnce() {
        var pacing = AcknowledgementPacing(interval: millisecond)
        #expect(!ask(&pacing, read: false, at: 5 * millisecond))
        #expect(ask(&pacing, read: true, at: 5 * millisecond))
        #expect(!pacing.owed)
        #expect(!ask(&pacing, read: false, at: 50 * millisecond))
    }

    @Test("reads within the interval are acknowledged once, when it has passed, and the poll waits no longer than that")
    func readsWithinTheIntervalOweOne() {
        var pacing = AcknowledgementPacing(interval: millisecond)
        #expect(ask(&pacing, read: true, at: 10 * millisecond))
        // A burst of turns 100 µs apart: no acknowledgement asked for, one owed.
        for step in 1...9 {
            #expect(!ask(&pacing, read: true, at: 10 * millisecond + UInt64(step) * 100_000))
        }
        #expect(pacing.owed)
        // The loop's poll would wait 500 ms; it waits until the owed one is due: the
        // 100 µs left, rounded up to a millisecond.
        #expect(pacing.pollTimeout(at: 10 * millisecond + 900_000, usual: 500) == 1)
        // The poll came back empty after it: the owed acknowledgement is asked for now.
        #expect(ask(&pacing, read: false, at: 11 * millisecond))
        #expect(!pacing.owed)
        #expect(pacing.pollTimeout(at: 11 * millisecond, usual: 500) == 500)
    }

    @Test("at a steady high rate at most one acknowledgement per interval is asked for")
    func steadyRateIsBounded() {
        var pacing = AcknowledgementPacing(interval: millisecond)
        // One turn every 20 µs for 100 ms.
        let asked = (0..<5_000).filter { pacing.acknowledgeNow(read: true, sent: false, at: 1_000 * millisecond + UInt64($0) * 20_000) }.count
        #expect(asked == 100)
    }

    /// What the turn wrote carried the ACK of all read before it: asking for a pure one
    /// as well would send a second ACK, at a system call's cost, on nearly every turn at
    /// full speed.
    @Test("a turn that wrote asks for no acknowledgement and owes none; the next quick one waits an interval")
    func writingAcknowledges() {
        var pacing = AcknowledgementPacing(interval: millisecond)
        #expect(!ask(&pacing, read: true, sent: true, at: 10 * millisecond))
        #expect(!pacing.owed)
        #expect(pacing.pollTimeout(at: 10 * millisecond, usual: 500) == 500)
        // A turn that read and wrote nothing within the interval owes one, due when the
        // interval since the write has passed.
        #expect(!ask(&pacing, read: true, at: 10 * millisecond + 400_000))
        #expect(pacing.owed)
        #expect(pacing.pollTimeout(at: 10 * millisecond + 400_000, usual: 500) == 1)
        #expect(ask(&pacing, read: false, at: 11 * millisecond))
        // An owed one is settled by the next write as well.
        #expect(!ask(&pacing, read: true, at: 11 * millisecond + 100_000))
        #expect(pacing.owed)
        #expect(!ask(&pacing, read: false, sent: true, at: 11 * millisecond + 200_000))
        #expect(!pacing.owed)
        // With no write, a read past the interval is acknowledged at once, as before.
        #expect(ask(&pacing, read: true, at: 13 * millisecond))
    }

    @Test("nothing owed: the poll waits as usual; the due time passed: it does not wait")
    func pollTimeoutBounds() {
        var pacing = AcknowledgementPacing(interval: 3 * millisecond)
        #expect(pacing.pollTimeout(at: 0, usual: 500) == 500)
        #expect(ask(&pacing, read: true, at: 100 * millisecond))
        #expect(!ask(&pacing, read: true, at: 100 * millisecond + 1))
        #expect(pacing.pollTimeout(at: 100 * millisecond + 1, usual: 500) == 3)
        #expect(pacing.pollTimeout(at: 100 * millisecond + 1, usual: 2) == 2)
        #expect(pacing.pollTimeout(at: 100 * millisecond + 1, usual: 0) == 0, "a poll that would not wait still does not")
        #expect(pacing.pollTimeout(at: 104 * millisecond, usual: 500) == 0)
    }

    /// A poll that would otherwise wait without end (`usual` negative, as `poll` takes
    /// it) waits until the owed acknowledgement is due: not forever, and not 0, which
    /// would turn the loop into a busy one until then.
    @Test("a poll that would wait without end waits until the owed acknowledgement is due")
    func aPollWithoutEndWaitsUntilTheAcknowledgementIsDue() {
        var pacing = AcknowledgementPacing(interval: 3 * millisecond)
        #expect(pacing.pollTimeout(at: 100 * millisecond, usual: -1) == -1, "nothing owed: without end")
        #expect(ask(&pacing, read: true, at: 100 * millisecond))
        #expect(!ask(&pacing, read: true, at: 101 * millisecond))
        #expect(pacing.pollTimeout(at: 101 * millisecond, usual: -1) == 2)
    }

    /// The poll's wait is rounded up to a whole millisecond, not past one: when exactly
    /// whole milliseconds are left until an owed acknowledgement is due, the poll waits
    /// that many, so the acknowledgement is not asked for a millisecond late.
    @Test("whole milliseconds left until the owed acknowledgement: the poll waits exactly those")
    func pollTimeoutOnWholeMilliseconds() {
        var pacing = AcknowledgementPacing(interval: 3 * millisecond)
        #expect(ask(&pacing, read: true, at: 100 * millisecond))
        #expect(!ask(&pacing, read: true, at: 100 * millisecond))
        #expect(pacing.pollTimeout(at: 100 * millisecond, usual: 500) == 3)
        #expect(pacing.pollTimeout(at: 102 * millisecond, usual: 500) == 1)
        #expect(pacing.pollTimeout(at: 102 * millisecond + 1, usual: 500) == 1)
    }

    @Test("a clock that went backwards does not hold an acknowledgement back")
    func clockBackwards() {
        var pacing = AcknowledgementPacing(interval: millisecond)
        #expect(ask(&pacing, read: true, at: 10 * millisecond))
        #expect(ask(&pacing, read: true, at: 5 * millisecond))
        #expect(!ask(&pacing, read: true, at: 5 * millisecond + 1))
        #expect(pacing.pollTimeout(at: 1 * millisecond, usual: 500) == 0)
    }
}
