@testable import GeotifyMQTT
import Testing

/// When the network loop ends a burst, checked as a pure value: the loop's monotonic time
/// is passed in, so no clock or socket is involved.
@Suite("BurstPacing")
struct BurstPacingTests {
    private let microsecond: UInt64 = 1_000
    private let millisecond: UInt64 = 1_000_000

    /// `wait` for a burst that is not full, with nothing to write and an owner in no hurry.
    private func wait(_ pacing: BurstPacing, at now: UInt64) -> UInt64 {
        pacing.wait(at: now, full: false, mustWrite: false, hurried: false)
    }

    @Test("the first burst, and one after a pause longer than the interval, end at once")
    func sparseTrafficEndsAtOnce() {
        var pacing = BurstPacing(interval: millisecond)
        #expect(wait(pacing, at: 7 * millisecond) == 0)
        pacing.ended(at: 7 * millisecond)
        #expect(wait(pacing, at: 8 * millisecond) == 0, "exactly an interval later: not dense")
        #expect(wait(pacing, at: 50 * millisecond) == 0)
    }

    @Test("in dense traffic a burst waits until an interval after the last one ended")
    func denseTrafficWaitsForTheInterval() {
        var pacing = BurstPacing(interval: millisecond)
        pacing.ended(at: 10 * millisecond)
        #expect(wait(pacing, at: 10 * millisecond + 300 * microsecond) == 700 * microsecond)
        #expect(wait(pacing, at: 10 * millisecond + 1) == millisecond - 1)
    }

    @Test("a full burst, one with something to write, and a hurried owner end at once")
    func reasonsNotToWait() {
        var pacing = BurstPacing(interval: millisecond)
        pacing.ended(at: 10 * millisecond)
        let now = 10 * millisecond + 200 * microsecond
        #expect(pacing.wait(at: now, full: true, mustWrite: false, hurried: false) == 0)
        #expect(pacing.wait(at: now, full: false, mustWrite: true, hurried: false) == 0, "a QoS 1 message's acknowledgement waits to be written")
        #expect(pacing.wait(at: now, full: false, mustWrite: false, hurried: true) == 0)
        #expect(pacing.wait(at: now, full: false, mustWrite: false, hurried: false) == 800 * microsecond)
    }

    /// The boundary of "dense": a burst that empties the socket in the very nanosecond
    /// the last one ended is dense traffic, so it waits the whole interval (only a clock
    /// that went back, not one that stood still, ends it at once).
    @Test("a burst at the instant the last one ended waits the whole interval")
    func burstAtTheSameInstantWaits() {
        var pacing = BurstPacing(interval: millisecond)
        pacing.ended(at: 10 * millisecond)
        #expect(wait(pacing, at: 10 * millisecond) == millisecond)
    }

    @Test("a clock that went back does not make a burst wait")
    func clockGoingBack() {
        var pacing = BurstPacing(interval: millisecond)
        pacing.ended(at: 10 * millisecond)
        #expect(wait(pacing, at: 9 * millisecond) == 0)
    }

    @Test("messages every 10 µs for 100 ms: at most one burst end per interval, none waiting longer than it")
    func steadyRateIsBounded() {
        var pacing = BurstPacing(interval: millisecond)
        let start = 1_000 * millisecond
        var now = start
        var ends = 0
        var longest: UInt64 = 0
        // The loop as ConnectionSupervisor runs it: a turn reads what came (the reading
        // and handling take 50 µs), waits as the pacing says, reads again, and ends the
        // burst; the next turn starts at once, since messages keep coming.
        while now < start + 100 * millisecond {
            now += 50 * microsecond
            let wait = wait(pacing, at: now)
            longest = max(longest, wait)
            now += wait
            pacing.ended(at: now)
            ends += 1
        }
        #expect(ends <= 101)
        #expect(ends >= 99, "the bursts come as often as the interval allows, not less")
        #expect(longest <= millisecond)
        // The same traffic without pacing would end a burst every 50 µs: 2 000 of them.
        var unpaced = BurstPacing(interval: 0)
        now = start
        ends = 0
        while now < start + 100 * millisecond {
            now += 50 * microsecond
            now += wait(unpaced, at: now)
            unpaced.ended(at: now)
            ends += 1
        }
        #expect(ends == 2_000)
    }
}
