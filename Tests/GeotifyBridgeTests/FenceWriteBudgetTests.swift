import Testing
@testable import GeotifyBridge

/// The token bucket of writing time each device's fence changes spend from: a change may
/// start while time is left, its write is charged after, and a minute gives the budget
/// back, a device at a time, only recent devices held.
@Suite("FenceWriteBudget")
struct FenceWriteBudgetTests {
    /// Whether `wait` is `seconds`, to a nanosecond (the refill rate is a 60th).
    func waits(_ wait: Double?, _ seconds: Double) -> Bool {
        wait.map { abs($0 - seconds) < 1e-9 } ?? false
    }

    @Test func changesStartWhileTimeIsLeftAndTheirWritesAreChargedAfter() {
        var budget = FenceWriteBudget(perMinute: 1)
        #expect(budget.wait(for: "a", now: 100) == nil)
        budget.charge(0.75, to: "a", now: 100)
        #expect(budget.wait(for: "a", now: 100) == nil, "a quarter of a second left")
        budget.charge(0.75, to: "a", now: 100)
        #expect(waits(budget.wait(for: "a", now: 100), 30), "half a second owed, at a second a minute")
        #expect(waits(budget.wait(for: "a", now: 115), 15), "asking spends nothing")
        #expect(budget.wait(for: "a", now: 131) == nil)
    }

    /// A budget spent to exactly nothing is spent: the next change waits for the refill
    /// (a moment, the least charge's worth), and may start once any time is back.
    @Test func aBudgetSpentToNothingLetsNoChangeStart() {
        var budget = FenceWriteBudget(perMinute: 1)
        budget.charge(0.5, to: "a", now: 100)
        budget.charge(0.5, to: "a", now: 100)
        #expect(waits(budget.wait(for: "a", now: 100), FenceWriteBudget.leastCharge))
        #expect(budget.wait(for: "a", now: 100.01) == nil)
    }

    @Test func aWriteCountsAtLeastAMillisecond() {
        var budget = FenceWriteBudget(perMinute: 0.0045)
        for write in 0..<5 {
            #expect(budget.wait(for: "a", now: 0) == nil, "write \(write)")
            budget.charge(0, to: "a", now: 0)
        }
        #expect(budget.wait(for: "a", now: 0) != nil, "five writes a clock did not see took 5 ms of 4.5")
    }

    @Test func eachDeviceHasABudgetOfItsOwn() {
        var budget = FenceWriteBudget(perMinute: 1)
        budget.charge(3, to: "mallory/1", now: 0)
        #expect(waits(budget.wait(for: "mallory/1", now: 0), 120))
        #expect(budget.wait(for: "alice/phone", now: 0) == nil)
    }

    @Test func idleTimeRefillsAtMostTheBudget() {
        var budget = FenceWriteBudget(perMinute: 2)
        budget.charge(1, to: "a", now: 0)
        // An hour idle gives back two seconds, not a hundred and twenty.
        #expect(budget.wait(for: "a", now: 3_600) == nil)
        budget.charge(3, to: "a", now: 3_600)
        #expect(waits(budget.wait(for: "a", now: 3_600), 30))
    }

    @Test func aClockThatGoesBackRefillsNothing() {
        var budget = FenceWriteBudget(perMinute: 1)
        budget.charge(1.5, to: "a", now: 1_000)
        #expect(waits(budget.wait(for: "a", now: 400), 30), "time before the last write counts as none")
        #expect(waits(budget.wait(for: "a", now: 1_029), 1), "and the clock's return refills from the last write")
        #expect(budget.wait(for: "a", now: 1_031) == nil)
    }

    @Test func devicesWhoseBudgetIsFullAgainAreForgotten() {
        var budget = FenceWriteBudget(perMinute: 2)
        for device in 0..<1_000 { budget.charge(0.5, to: "d\(device)", now: 0) }
        #expect(budget.count == 1_000, "every device's fences were written within the minute")
        // A minute later every budget is full again: the next writes forget them.
        for device in 0..<200 { budget.charge(0.5, to: "e\(device)", now: 60) }
        #expect(budget.count <= 200)
        #expect(budget.wait(for: "d0", now: 60) == nil)
    }
}
