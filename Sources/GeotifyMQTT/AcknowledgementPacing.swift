/// When the network loop asks the kernel to acknowledge what it read at once
/// (`TCP_QUICKACK`) instead of leaving the ACK to the kernel's delayed-ACK timer.
///
/// Why at all: a broker with Nagle's algorithm on (mosquitto's default,
/// `set_tcp_nodelay false`) holds each next small message to a subscriber until its last
/// segment is acknowledged. A subscriber that only reads (QoS 0 positions) answers
/// nothing the ACK could ride on, so each message waited for the delayed ACK: 24 ms p50
/// at 2 000 positions/s on loopback, 0.3 ms with the ACK at once.
///
/// Why paced: an ACK at the end of every turn costs the most when the rate is highest.
/// With libmosquitto's reads served from one buffer, turns are short and many; each ACK
/// let the broker's Nagle release a smaller segment, which made another turn and
/// another ACK. In the side-by-side (200 000 positions at full speed) that was 0.46–0.48
/// TCP segments a message against 0.14–0.16 with no ACK asked for, and 9.1–9.8 µs of the
/// bridge's CPU a message against 7.0–7.2 µs. So an immediate ACK is asked for at most
/// once per `interval`; one owed meanwhile is asked for once the interval has passed,
/// the loop waiting no longer than that. A message held by Nagle then waits at most
/// about `interval`, not the delayed-ACK timer.
///
/// Why not when the turn wrote: every segment the bridge sends carries the ACK of all
/// it has received (and, with Nagle off on its side, goes out at once), so the pure ACK
/// that `TCP_QUICKACK` makes would be a second one. The loop decides after the turn's
/// writes: a turn that sent something counts as acknowledged then. At full speed nearly
/// every turn publishes, and the quick ACK's `setsockopt`, which sends the ACK and lets
/// the broker's held segment go within the call, was 2.5 % of the bridge's CPU.
///
/// A pure value: the loop passes the monotonic time in, so tests need no clock.
struct AcknowledgementPacing: Sendable, Equatable {
    /// The least time between two immediate acknowledgements, in nanoseconds.
    let interval: UInt64
    /// When the last immediate acknowledgement was asked for.
    private var last: UInt64?
    /// Whether something was read since the last one.
    private(set) var owed = false

    /// The interval the network loop uses: short beside the 5 ms p99 the bridge aims at,
    /// long beside a turn at full rate (a few dozen microseconds).
    static let standard = AcknowledgementPacing(interval: 1_000_000)

    init(interval: UInt64) {
        self.interval = interval
    }

    /// After a turn at `now` (monotonic nanoseconds) that read something (`read`) or
    /// not, and wrote something to the socket (`sent`, which acknowledged all read
    /// before it) or not: whether to ask for the immediate acknowledgement now. When
    /// not, and something was read and not sent after, one is owed.
    mutating func acknowledgeNow(read: Bool, sent: Bool, at now: UInt64) -> Bool {
        if sent {
            owed = false
            last = now
            return false
        }
        if read { owed = true }
        guard owed else { return false }
        if let last, now < last &+ interval, now >= last { return false }
        owed = false
        last = now
        return true
    }

    /// How long, in milliseconds, the loop's poll may wait at `now` when it would
    /// otherwise wait `usual` (negative: without end, as `poll` takes it): no longer than
    /// until an owed acknowledgement is due (rounded up to a whole millisecond, so it is
    /// due when the poll returns).
    func pollTimeout(at now: UInt64, usual: Int32) -> Int32 {
        guard owed, let last else { return usual }
        let due = last &+ interval
        guard now < due, now >= last else { return 0 }
        let milliseconds = (due - now + 999_999) / 1_000_000
        return Int32(min(usual < 0 ? UInt64(Int32.max) : UInt64(usual), milliseconds))
    }
}
