import Testing
@testable import GeotifyBridge

/// `CounterDelta` keeps `fixes_evaluated` apart from the other counters; what it reports
/// must not show that.
@Suite("Counter deltas")
struct CounterDeltaTests {
    @Test func theEvaluatedFixesAddUpBesideTheOtherCounters() {
        var delta = CounterDelta()
        #expect(delta.isEmpty)
        delta.add(.fixesEvaluated)
        #expect(!delta.isEmpty)
        delta.add(.fixesEvaluated, 2)
        delta.add(.transitions, 4)
        delta.add(.fixesDropped(.tooOld))
        #expect(delta[.fixesEvaluated] == 3)
        #expect(delta[.transitions] == 4)
        #expect(delta[.notifications] == 0)
        #expect(delta.amounts == [.fixesEvaluated: 3, .transitions: 4, .fixesDropped(.tooOld): 1])
    }

    @Test func anotherCounterAloneIsNotEmptyAndReportsNoEvaluatedFixes() {
        var delta = CounterDelta()
        delta.add(.messagesIgnored)
        #expect(!delta.isEmpty)
        #expect(delta.amounts == [.messagesIgnored: 1])
    }

    @Test func deltasAreEqualWhenTheyAddTheSameAmounts() {
        var one = CounterDelta()
        one.add(.fixesEvaluated, 2)
        one.add(.errors(.invalidJSON))
        var other = CounterDelta()
        other.add(.errors(.invalidJSON))
        other.add(.fixesEvaluated)
        #expect(one != other)
        other.add(.fixesEvaluated)
        #expect(one == other)
    }
}
