/// When the network loop ends a burst of messages it read: at once, or after waiting a
/// little for more.
///
/// Why: the end of a burst is where the client's owner handles what was read. For the
/// bridge that is a commit, a hand-over to the publisher and a write to the broker, with
/// a fixed cost whatever the burst holds. At full speed a burst ended each time the
/// socket was empty, every 200 µs or so, with 19 positions on average: in the
/// side-by-side benchmark 10 500 commits for 200 000 positions, and a poll, a flush and
/// the lanes' hand-offs with each.
///
/// So while traffic is dense (the last burst ended less than `interval` ago), a burst
/// that emptied the socket waits until `interval` after the last one's end, then reads
/// what came meanwhile, and ends. Sparse traffic (the last burst ended longer ago) is
/// handled at once, so a message waits at most `interval` more, and only when messages
/// come faster than one an `interval`.
///
/// It never waits when something is waiting to be written: a QoS 1 message read queues
/// its acknowledgement, which is written only after the burst's end (after its commit),
/// and the broker sends a client no more than its in-flight window before it is
/// acknowledged, so waiting would only idle both. Nor does it wait once a burst is full,
/// or when the owner is `hurried`: the bridge's publisher, with messages waiting for its
/// in-flight window, refills it at a burst's end from the acknowledgements the burst
/// read, so waiting would cap what it publishes at a window an interval.
///
/// A pure value: the loop passes the monotonic time in, so tests need no clock.
struct BurstPacing: Sendable, Equatable {
    /// The least time between the ends of two bursts while traffic is dense, in
    /// nanoseconds.
    let interval: UInt64
    /// When the last burst ended.
    private(set) var lastEnd: UInt64?

    /// The interval the network loop uses, as `AcknowledgementPacing`'s: short beside
    /// the 5 ms p99 latency the bridge aims at, five bursts' worth at full speed.
    static let standard = BurstPacing(interval: 1_000_000)

    init(interval: UInt64) {
        self.interval = interval
    }

    /// How long (nanoseconds) a burst that emptied the socket at `now` waits for more
    /// before it ends: 0 to end it now. `full` says it reached the most a burst reads;
    /// `mustWrite` that something waits to be written; `hurried` that the owner needs
    /// the burst's end at once.
    func wait(at now: UInt64, full: Bool, mustWrite: Bool, hurried: Bool) -> UInt64 {
        guard !full, !mustWrite, !hurried, let lastEnd, now >= lastEnd else { return 0 }
        let due = lastEnd &+ interval
        return due > now ? due - now : 0
    }

    /// Notes that a burst ended at `now`.
    mutating func ended(at now: UInt64) {
        lastEnd = now
    }
}
