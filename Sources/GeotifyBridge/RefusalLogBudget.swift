import GeotifyCore

/// How many refusal warnings reach the log (`LogBudget`, by error code): every refused
/// message is counted (`geotify/stats`, `/metrics`) and reported on `geotify/error`, so
/// past the first 10 of each code a minute its line is only summed up (`suppressed 19873
/// more refusals in the last 60 s (invalid_json 19800, unknown_device 73); the statistics
/// count every one`). Each lane keeps its own (a flood spread over many devices costs that
/// much on each lane), and the bridge one for the messages it refuses for their topic
/// alone and those it leaves out for their size.
package typealias RefusalLogBudget = LogBudget<ErrorCode>

extension LogBudget where Key == ErrorCode {
    /// The refusals of one code logged in full in an interval.
    package static var linesPerCode: Int { linesPerKey }

    /// A budget of refusal lines; with `everyLine`, every refusal is logged.
    package init(everyLine: Bool = false) {
        self.init("refusals", ending: "the statistics count every one", everyLine: everyLine, name: \.rawValue)
    }
}
