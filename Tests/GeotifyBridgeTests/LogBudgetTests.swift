import Testing
@testable import GeotifyBridge

/// `LogBudget` by any key: each key its own lines, and a summary that names the largest
/// counts first, at most `keysNamed` of them, however many keys a flood spreads over.
@Suite("LogBudget")
struct LogBudgetTests {
    @Test func aSummaryNamesAtMostTenKeysAndCountsTheRest() {
        var budget = LogBudget<String>("notification lines", ending: "each was published", name: { $0 })
        for device in 0..<12 {
            for _ in 0..<(LogBudget<String>.linesPerKey + 12 - device) {
                #expect(budget.take("d\(device)", at: 0).summary == nil)
            }
        }
        let counts = (0..<10).map { "d\($0) \(12 - $0)" }.joined(separator: ", ")
        #expect(budget.summary(at: 60) == "suppressed 78 more notification lines in the last 60 s (\(counts), 2 more); each was published")
    }

    /// With exactly `keysNamed` keys every one is named, and no "0 more" follows them.
    @Test func aSummaryOfExactlyTenKeysNamesEachAndNoMore() {
        var budget = LogBudget<String>("notification lines", ending: "each was published", name: { $0 })
        for device in 0..<LogBudget<String>.keysNamed {
            for _ in 0...LogBudget<String>.linesPerKey { _ = budget.take("d\(device)", at: 0) }
        }
        let counts = (0..<10).map { "d\($0) 1" }.joined(separator: ", ")
        #expect(budget.summary(at: 60) == "suppressed 10 more notification lines in the last 60 s (\(counts)); each was published")
    }
}
