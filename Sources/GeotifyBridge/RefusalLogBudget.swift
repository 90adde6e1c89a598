import GeotifyCore

/// How many refusal warnings reach the log: in each interval of `interval` seconds the
/// first `linesPerCode` refusals of each error code are logged in full, the rest are
/// only counted, and when the interval is over one line says what was left out
/// (`suppressed 19873 more refusals in the last 60 s (invalid_json 19800,
/// unknown_device 73); the statistics count every one`).
///
/// Why: every refused message is counted (`geotify/stats`, `/metrics`) and reported on
/// `geotify/error`, but a log line for each let a hostile client fill the disk: 20 000 bad
/// messages made 3.7 MB of log in 5 s, which Docker's default `json-file` driver or a
/// plain file keeps without bound. With the budget a flood costs at most `linesPerCode`
/// lines for each code it causes and one summary an interval, however fast it comes.
///
/// Why these numbers: someone debugging one misconfigured tracker sees its first
/// refusals at once, each in full with its topic and reason, and a refusal of another
/// kind, or the first after a quiet interval, is always logged; 10 is the burst of the
/// Linux kernel's `printk_ratelimit`, more than a person sends by hand in a minute while
/// trying payloads, and a sample of every code of a flood (the topics name the devices it
/// comes from) comes again each interval. A minute keeps a single-code flood at 11 lines
/// (about 2 KB) a minute, some 3 MB a day, against the 3.7 MB in 5 s it cost without.
///
/// An interval begins with the first refusal after the last one ended and is over
/// `interval` seconds later; the summary is due then, asked for at each tick (so it comes
/// when no more refusals do) and before each refusal. A clock that goes back by more than
/// an interval ends it, so a step of the wall clock holds nothing back for long; a smaller
/// step does not (a message posted to the web console during a burst from the broker can
/// be timed a little after the burst's later messages, and must not start an interval).
/// With `everyLine` (logLevel debug, where the operator asked for everything) every
/// refusal is logged in full and nothing is summed up.
///
/// A pure value: the time comes in with each refusal and each tick. Each lane keeps its
/// own (a flood spread over many devices costs that much on each lane), and the bridge one
/// for the messages it refuses for their topic alone and those it leaves out for their
/// size.
package struct RefusalLogBudget: Sendable {
    /// The refusals of one code logged in full in an interval.
    package static let linesPerCode = 10
    /// The length of an interval, in seconds.
    package static let interval = 60.0

    /// Whether every refusal is logged in full (logLevel debug).
    package let everyLine: Bool
    /// When the interval under way began; nil when none is (no refusal since the last ended).
    private var began: Double?
    /// The refusals of the interval logged in full, by code.
    private var logged: [ErrorCode: Int] = [:]
    /// The refusals of the interval only counted, by code.
    private var suppressed: [ErrorCode: Int] = [:]

    /// A budget that logs `linesPerCode` refusals of each code an interval, or every one
    /// with `everyLine`.
    package init(everyLine: Bool = false) {
        self.everyLine = everyLine
    }

    /// Takes a refusal with `code` at `now` (seconds): the summary of an interval that was
    /// over by then, to log first, and whether this refusal is logged in full (else it is
    /// counted toward the next summary).
    package mutating func take(_ code: ErrorCode, at now: Double) -> (summary: String?, inFull: Bool) {
        if everyLine { return (nil, true) }
        let summary = summary(at: now)
        if began == nil { began = now }
        let count = logged[code, default: 0]
        if count < Self.linesPerCode {
            logged[code] = count + 1
            return (summary, true)
        }
        suppressed[code, default: 0] += 1
        return (summary, false)
    }

    /// The summary due at `now`: when the interval under way is over (or the clock went
    /// back by more than an interval), it ends, and the line says what it left out; nil
    /// when it is not over or left nothing out.
    package mutating func summary(at now: Double) -> String? {
        guard let began, now >= began + Self.interval || now < began - Self.interval else { return nil }
        defer {
            self.began = nil
            logged.removeAll(keepingCapacity: true)
            suppressed.removeAll(keepingCapacity: true)
        }
        guard !suppressed.isEmpty else { return nil }
        let total = suppressed.values.reduce(0, +)
        let codes = suppressed.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key.rawValue < $1.key.rawValue }
            .map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", ")
        // After a step back of the clock the interval's length stands for what passed.
        let seconds = now >= began ? now - began : Self.interval
        return "suppressed \(total) more refusals in the last \(Int(seconds)) s (\(codes)); the statistics count every one"
    }
}
