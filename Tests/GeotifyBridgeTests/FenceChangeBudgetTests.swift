import Testing
@testable import GeotifyBridge

/// The token bucket each device's fence changes spend from: a burst of `perMinute`, then
/// `perMinute` a minute, a device at a time, and only recent devices held.
@Suite("FenceChangeBudget")
struct FenceChangeBudgetTests {
    @Test func aBurstOfTheLimitPassesThenTheNextWaitsForItsShare() {
        var budget = FenceChangeBudget(perMinute: 30)
        for _ in 0..<30 { #expect(budget.spend(for: "a", now: 100) == nil) }
        #expect(budget.spend(for: "a", now: 100) == 2, "30 a minute: one every 2 s")
        #expect(budget.spend(for: "a", now: 101) == 1, "a refusal spends nothing")
        #expect(budget.spend(for: "a", now: 102) == nil)
        #expect(budget.spend(for: "a", now: 102) == 2)
    }

    @Test func eachDeviceHasABudgetOfItsOwn() {
        var budget = FenceChangeBudget(perMinute: 2)
        #expect(budget.spend(for: "mallory/1", now: 0) == nil)
        #expect(budget.spend(for: "mallory/1", now: 0) == nil)
        #expect(budget.spend(for: "mallory/1", now: 0) != nil)
        #expect(budget.spend(for: "alice/phone", now: 0) == nil)
        #expect(budget.spend(for: "alice/phone", now: 0) == nil)
    }

    @Test func aMinuteRefillsAtMostTheBurst() {
        var budget = FenceChangeBudget(perMinute: 3)
        for _ in 0..<3 { #expect(budget.spend(for: "a", now: 0) == nil) }
        // An hour idle gives back three changes, not sixty.
        for _ in 0..<3 { #expect(budget.spend(for: "a", now: 3_600) == nil) }
        #expect(budget.spend(for: "a", now: 3_600) == 20)
    }

    @Test func aClockThatGoesBackRefillsNothing() {
        var budget = FenceChangeBudget(perMinute: 60)
        for _ in 0..<60 { #expect(budget.spend(for: "a", now: 1_000) == nil) }
        #expect(budget.spend(for: "a", now: 400) == 1, "time before the last change counts as none")
        #expect(budget.spend(for: "a", now: 1_001) == nil, "and the clock's return refills from the last change")
    }

    @Test func devicesWhoseBudgetIsFullAgainAreForgotten() {
        var budget = FenceChangeBudget(perMinute: 60)
        for device in 0..<1_000 { #expect(budget.spend(for: "d\(device)", now: 0) == nil) }
        #expect(budget.count == 1_000, "every device changed within the minute")
        // A minute later every budget is full again: the next changes forget them.
        for device in 0..<200 { #expect(budget.spend(for: "e\(device)", now: 60) == nil) }
        #expect(budget.count <= 200)
        #expect(budget.spend(for: "d0", now: 60) == nil)
    }
}
