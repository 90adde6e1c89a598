@testable import GeotifyMQTT
import GeotifyTestSupport
import Testing

/// The reconnect delays, checked as pure values: the randomness is injected, and how
/// long a connection lasted is passed in, so no clock is involved.
@Suite("ReconnectBackoff")
struct ReconnectBackoffTests {
    @Test("without jitter the delays double from the minimum and stay at the maximum")
    func doublesUpToTheCap() {
        var backoff = ReconnectBackoff(minimum: 1, maximum: 30, jitter: 0)
        var random = FixedRandom(0)
        let delays = (0..<8).map { _ in backoff.delay(afterConnectionOf: nil, using: &random) }
        #expect(delays == [1, 2, 4, 8, 16, 30, 30, 30])
    }

    @Test("each delay lies in [ceiling × (1 − jitter), ceiling], at both ends of the random range",
          arguments: [UInt64.min, UInt64.max])
    func jitterBoundsAtTheExtremes(bits: UInt64) {
        var backoff = ReconnectBackoff(minimum: 1, maximum: 30, jitter: 0.5)
        var random = FixedRandom(bits)
        for failures in 0..<10 {
            let ceiling = backoff.ceiling(afterFailures: failures)
            let delay = backoff.delay(afterConnectionOf: nil, using: &random)
            #expect(delay >= ceiling * 0.5 && delay <= ceiling, "failures \(failures): \(delay) of \(ceiling)")
        }
    }

    @Test("many clients' delays are spread over the jitter range, within the bounds")
    func jitterSpreadsClients() {
        var random = SeededRandom(seed: 42)
        var first: [Double] = []
        var fifth: [Double] = []
        for _ in 0..<1_000 {
            var backoff = ReconnectBackoff(minimum: 1, maximum: 30, jitter: 0.5)
            let delays = (0..<5).map { _ in backoff.delay(afterConnectionOf: nil, using: &random) }
            first.append(delays[0])
            fifth.append(delays[4])
        }
        #expect(first.allSatisfy { $0 >= 0.5 && $0 <= 1 })
        #expect(fifth.allSatisfy { $0 >= 8 && $0 <= 16 })
        // Spread: both halves of the range are used, and hardly any two clients agree.
        #expect(first.contains { $0 < 0.6 } && first.contains { $0 > 0.9 })
        #expect(Set(first).count > 990)
    }

    @Test("a connection that lasted the maximum starts again from the minimum; a shorter one does not")
    func resetAfterALastingConnection() {
        var backoff = ReconnectBackoff(minimum: 1, maximum: 30, jitter: 0)
        var random = FixedRandom(0)
        for _ in 0..<4 { _ = backoff.delay(afterConnectionOf: nil, using: &random) }
        #expect(backoff.failures == 4)
        // Accepted, then dropped at once (say, kicked out by a twin with the same id).
        #expect(backoff.delay(afterConnectionOf: 0.2, using: &random) == 16)
        #expect(backoff.delay(afterConnectionOf: 29.9, using: &random) == 30)
        #expect(backoff.delay(afterConnectionOf: 30, using: &random) == 1)
        #expect(backoff.delay(afterConnectionOf: nil, using: &random) == 2)
    }

    @Test("a client's delays run from its options' minimum to their maximum, each shortened by up to half")
    func theClientsBackoffComesFromItsOptions() {
        var options = MQTTOptions(clientID: "backoff", port: 1883)
        options.reconnectDelayMin = 0.5
        options.reconnectDelayMax = 20
        let backoff = MQTTClient.backoff(options)
        #expect(backoff == ReconnectBackoff(minimum: 0.5, maximum: 20, jitter: 0.5))
        // Clients cut off together spread out: the first delays of a hundred differ.
        var random = SeededRandom(seed: 7)
        let first = (0..<100).map { _ in
            var each = backoff
            return each.delay(afterConnectionOf: nil, using: &random)
        }
        #expect(Set(first).count == 100 && first.allSatisfy { $0 >= 0.25 && $0 <= 0.5 })
    }

    @Test("bad parameters are clamped and endless failures neither overflow nor exceed the cap")
    func clampsAndNeverOverflows() {
        let odd = ReconnectBackoff(minimum: 0, maximum: -5, jitter: 7)
        #expect(odd.minimum > 0 && odd.maximum == odd.minimum && odd.jitter == 1)
        var backoff = ReconnectBackoff(minimum: 1, maximum: 600, jitter: 1)
        var random = FixedRandom(UInt64.max)
        for _ in 0..<10_000 {
            let delay = backoff.delay(afterConnectionOf: nil, using: &random)
            #expect(delay > 0 && delay <= 600)
        }
        #expect(backoff.ceiling(afterFailures: Int.max) == 600)
    }
}

/// A "random" source that always gives the same bits: 0 makes every jitter share 0, all
/// ones makes it as large as it can be.
private struct FixedRandom: RandomNumberGenerator {
    let bits: UInt64
    init(_ bits: UInt64) { self.bits = bits }
    mutating func next() -> UInt64 { bits }
}

/// The test support's seeded generator (SplitMix64) as a `RandomNumberGenerator`, so
/// the spread test is reproducible.
private struct SeededRandom: RandomNumberGenerator {
    var source: SplitMix64
    init(seed: UInt64) { source = SplitMix64(seed: seed) }
    mutating func next() -> UInt64 { source.next() }
}
