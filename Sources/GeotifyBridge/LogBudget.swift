/// How many lines of one kind reach the log: in each interval of `interval` seconds the
/// first `linesPerKey` lines of each key (an error code, a device, a delivery target) are
/// logged in full, the rest are only counted, and when the interval is over one line says
/// what was left out, largest counts first (`suppressed 19873 more refusals in the last
/// 60 s (invalid_json 19800, unknown_device 73); the statistics count every one`).
///
/// Why: a hostile client must not fill the disk through the log. Every line it can cause
/// at will is one it can cause by the thousand a second: 20 000 bad messages made 3.7 MB
/// of log in 5 s, and one tracker hopping in and out of its fence 10 000 times made 2.6 MB
/// in 7 s (a notification line for each, and a dead letter's for each when a target
/// refused them), which Docker's default `json-file` driver or a plain file keeps
/// without bound. With the budget a flood costs at most `linesPerKey` lines for each key
/// it causes and one summary an interval, however fast it comes; what is left out is
/// still counted, published or stored where the summary says.
///
/// Why these numbers: someone watching one device or debugging one misconfigured tracker
/// sees its first lines at once, each in full, and a line of another key, or the first
/// after a quiet interval, is always logged; 10 is the burst of the Linux kernel's
/// `printk_ratelimit`, more than a person causes by hand in a minute, and a sample of
/// every key of a flood comes again each interval. A minute keeps a single-key flood at
/// 11 lines (about 2 KB) a minute, some 3 MB a day.
///
/// An interval begins with the first line after the last one ended and is over `interval`
/// seconds later; the summary is due then, asked for at each tick (so it comes when no
/// more lines do) and before each line. A clock that goes back by more than an interval
/// ends it, so a step of the wall clock holds nothing back for long; a smaller step does
/// not (a message posted to the web console during a burst from the broker can be timed
/// a little after the burst's later messages, and must not start an interval). With
/// `everyLine` (logLevel debug, where the operator asked for everything) every line is
/// logged in full and nothing is summed up.
///
/// A pure value: the time comes in with each line and each tick.
package struct LogBudget<Key: Hashable & Sendable>: Sendable {
    /// The lines of one key logged in full in an interval.
    package static var linesPerKey: Int { 10 }
    /// The length of an interval, in seconds.
    package static var interval: Double { 60 }
    /// The most keys a summary names; the rest are counted as "N more".
    package static var keysNamed: Int { 10 }

    /// Whether every line is logged in full (logLevel debug).
    package let everyLine: Bool
    /// What the lines are about, for the summary: `refusals`.
    private let kind: String
    /// What the summary ends with: where what was left out can still be found.
    private let ending: String
    /// A key as the summary names it.
    private let name: @Sendable (Key) -> String
    /// When the interval under way began; nil when none is (no line since the last ended).
    private var began: Double?
    /// The lines of the interval logged in full, by key.
    private var logged: [Key: Int] = [:]
    /// The lines of the interval only counted, by key.
    private var suppressed: [Key: Int] = [:]

    /// A budget for lines about `kind` whose summary ends with `ending` and names each key
    /// by `name`; with `everyLine`, every line is logged.
    package init(_ kind: String, ending: String, everyLine: Bool = false, name: @escaping @Sendable (Key) -> String) {
        self.kind = kind
        self.ending = ending
        self.everyLine = everyLine
        self.name = name
    }

    /// Takes a line of `key` at `now` (seconds): the summary of an interval that was over
    /// by then, to log first, and whether this line is logged in full (else it is counted
    /// toward the next summary).
    package mutating func take(_ key: Key, at now: Double) -> (summary: String?, inFull: Bool) {
        if everyLine { return (nil, true) }
        let summary = summary(at: now)
        if began == nil { began = now }
        let count = logged[key, default: 0]
        if count < Self.linesPerKey {
            logged[key] = count + 1
            return (summary, true)
        }
        suppressed[key, default: 0] += 1
        return (summary, false)
    }

    /// The summary due at `now`: when the interval under way is over (or the clock went
    /// back by more than an interval), it ends, and the line says what it left out; nil
    /// when it is not over or left nothing out.
    package mutating func summary(at now: Double) -> String? {
        guard let began, now >= began + Self.interval || now < began - Self.interval else { return nil }
        defer {
            self.began = nil
            logged.removeAll()
            suppressed.removeAll()
        }
        guard !suppressed.isEmpty else { return nil }
        let total = suppressed.values.reduce(0, +)
        let counts = suppressed.map { (name: name($0.key), count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.name < $1.name }
        var named = counts.prefix(Self.keysNamed).map { "\($0.name) \($0.count)" }
        if counts.count > Self.keysNamed { named.append("\(counts.count - Self.keysNamed) more") }
        // After a step back of the clock the interval's length stands for what passed.
        let seconds = now >= began ? now - began : Self.interval
        return "suppressed \(total) more \(kind) in the last \(Int(seconds)) s (\(named.joined(separator: ", "))); \(ending)"
    }
}
