import Testing

@testable import GeotifyBridge

/// The oldest outbox row in flight, as acknowledgements come in any order.
@Suite struct RowsInFlightTests {
    @Test func theOldestIsTheFirstRowNotAcknowledged() {
        var rows = RowsInFlight()
        #expect(rows.oldest == nil)
        for row in [3, 4, 5, 7, 9] as [Int64] { rows.handed(row) }
        #expect(rows.oldest == 3)
        rows.acknowledged(5)
        rows.acknowledged(4)
        #expect(rows.oldest == 3, "later rows acknowledged first leave the oldest in flight")
        rows.acknowledged(3)
        #expect(rows.oldest == 7, "then the mark passes every row acknowledged meanwhile")
        rows.acknowledged(9)
        rows.acknowledged(7)
        #expect(rows.oldest == nil)
        rows.handed(10)
        #expect(rows.oldest == 10)
    }

    /// The same as a search of the whole window, over a long run with acknowledgements
    /// shuffled within a window of 100 (the compaction of the array included).
    @Test func agreesWithASearchOfTheWindow() throws {
        var rows = RowsInFlight()
        var window: Set<Int64> = []
        var generator = SystemRandomNumberGenerator()
        var next: Int64 = 1
        for _ in 0..<20_000 {
            while window.count < 100 {
                rows.handed(next)
                window.insert(next)
                next += 1
            }
            let acknowledged = try #require(window.randomElement(using: &generator))
            window.remove(acknowledged)
            rows.acknowledged(acknowledged)
            #expect(rows.oldest == window.min())
        }
    }
}
