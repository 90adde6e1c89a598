import GeotifyCore
import Testing
@testable import GeotifyBridge

/// The budget of refusal warnings: the first `linesPerCode` of each code in an interval
/// in full, the rest counted and summed up in one line once the interval is over, a
/// refusal after a quiet interval in full again; time only as given.
@Suite("RefusalLogBudget")
struct RefusalLogBudgetTests {
    /// Takes `count` refusals of `code` at `now`; returns how many are logged in full and
    /// the summaries that came with them.
    func take(_ count: Int, _ code: ErrorCode, at now: Double, into budget: inout RefusalLogBudget) -> (inFull: Int, summaries: [String]) {
        var inFull = 0
        var summaries: [String] = []
        for _ in 0..<count {
            let taken = budget.take(code, at: now)
            if taken.inFull { inFull += 1 }
            if let summary = taken.summary { summaries.append(summary) }
        }
        return (inFull, summaries)
    }

    @Test func theFirstOfEachCodeAreLoggedInFullAndTheRestSummedUpOnceTheIntervalIsOver() {
        var budget = RefusalLogBudget()
        let json = take(19_800 + RefusalLogBudget.linesPerCode, .invalidJSON, at: 100, into: &budget)
        #expect(json.inFull == RefusalLogBudget.linesPerCode && json.summaries.isEmpty)
        let devices = take(73 + RefusalLogBudget.linesPerCode, .unknownDevice, at: 130, into: &budget)
        #expect(devices.inFull == RefusalLogBudget.linesPerCode, "another code has a budget of its own")
        #expect(budget.summary(at: 159.9) == nil, "not before the interval is over")
        #expect(budget.summary(at: 160) == "suppressed 19873 more refusals in the last 60 s (invalid_json 19800, unknown_device 73); the statistics count every one")
        #expect(budget.summary(at: 160.2) == nil, "said once")
    }

    @Test func aRefusalAfterAQuietIntervalIsLoggedInFull() {
        var budget = RefusalLogBudget()
        _ = take(20, .invalidJSON, at: 0, into: &budget)
        #expect(budget.summary(at: 60) != nil)
        let later = budget.take(.invalidJSON, at: 500)
        #expect(later.inFull && later.summary == nil)
    }

    /// Without a tick in between, the summary comes with the first refusal after the
    /// interval, before that refusal's own line, which begins the next interval.
    @Test func theNextRefusalBringsTheSummaryWhenNoTickDid() {
        var budget = RefusalLogBudget()
        _ = take(12, .outOfRange, at: 0, into: &budget)
        let next = budget.take(.outOfRange, at: 75)
        #expect(next.summary == "suppressed 2 more refusals in the last 75 s (out_of_range 2); the statistics count every one")
        #expect(next.inFull)
        #expect(budget.summary(at: 134) == nil, "the next interval began at 75")
    }

    @Test func anIntervalThatLeftNothingOutEndsWithoutALine() {
        var budget = RefusalLogBudget()
        #expect(take(RefusalLogBudget.linesPerCode, .invalidJSON, at: 0, into: &budget).inFull == RefusalLogBudget.linesPerCode)
        #expect(budget.summary(at: 61) == nil)
        #expect(budget.take(.invalidJSON, at: 62).inFull, "a new interval")
    }

    /// Codes of equal counts are named in alphabetical order, after larger counts.
    @Test func theSummaryNamesTheLargestCountsFirst() {
        var budget = RefusalLogBudget()
        for (code, count) in [(ErrorCode.wrongType, 3), (.emptyPayload, 3), (.notAllowed, 5)] {
            _ = take(RefusalLogBudget.linesPerCode + count, code, at: 0, into: &budget)
        }
        #expect(budget.summary(at: 60) == "suppressed 11 more refusals in the last 60 s (not_allowed 5, empty_payload 3, wrong_type 3); the statistics count every one")
    }

    /// A clock set back would otherwise hold the suppression (and the summary) for as long
    /// as it went back; a step back of less than an interval (a console post timed during a
    /// burst) ends nothing.
    @Test func aClockThatGoesBackByMoreThanAnIntervalEndsIt() {
        var budget = RefusalLogBudget()
        _ = take(14, .invalidJSON, at: 1_000, into: &budget)
        let little = budget.take(.invalidJSON, at: 999.5)
        #expect(!little.inFull && little.summary == nil)
        #expect(budget.summary(at: 941) == nil)
        let back = budget.take(.invalidJSON, at: 400)
        #expect(back.summary == "suppressed 5 more refusals in the last 60 s (invalid_json 5); the statistics count every one")
        #expect(back.inFull)
    }

    /// A flood costs at most `linesPerCode` lines a code and one summary an interval,
    /// whatever its rate.
    @Test func aFloodCostsABoundedNumberOfLinesAnInterval() {
        var budget = RefusalLogBudget()
        let codes: [ErrorCode] = [.invalidJSON, .outOfRange, .unknownAction]
        var lines = 0
        var suppressed = 0
        func logged(_ summary: String?) {
            guard let summary else { return }
            lines += 1
            suppressed += Int(summary.split(separator: " ")[1])!
        }
        var now = 0.0
        for number in 0..<600_000 {
            // 1 000 refusals a second for 10 minutes, the lane ticking every 0.2 s.
            now = Double(number) / 1_000
            let taken = budget.take(codes[number % codes.count], at: now)
            if taken.inFull { lines += 1 }
            logged(taken.summary)
            if number % 200 == 0 { logged(budget.summary(at: now)) }
        }
        logged(budget.summary(at: now + 60))
        #expect(lines == 10 * (codes.count * RefusalLogBudget.linesPerCode + 1))
        #expect(suppressed + 10 * codes.count * RefusalLogBudget.linesPerCode == 600_000, "each refusal logged or summed up")
    }

    /// At logLevel debug the operator asked for everything.
    @Test func everyLineLogsEveryRefusalAndSumsUpNothing() {
        var budget = RefusalLogBudget(everyLine: true)
        #expect(take(1_000, .invalidJSON, at: 0, into: &budget).inFull == 1_000)
        #expect(budget.summary(at: 60) == nil)
    }

    /// A step back of exactly an interval is not more than one: the interval goes on, and
    /// only a step back past it ends the interval.
    @Test func aClockThatGoesBackByExactlyAnIntervalEndsNothing() {
        var budget = RefusalLogBudget()
        _ = take(14, .invalidJSON, at: 1_000, into: &budget)
        #expect(budget.summary(at: 940) == nil)
        #expect(budget.summary(at: 939.5) == "suppressed 4 more refusals in the last 60 s (invalid_json 4); the statistics count every one")
    }
}
