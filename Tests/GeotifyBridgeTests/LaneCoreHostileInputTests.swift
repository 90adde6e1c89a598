import Testing
@testable import GeotifyBridge
import GeotifyMQTT

/// A tracker may send anything on any topic it may write: through the router and the
/// pure lane core, thousands of hostile messages a seed (`HostileTraffic`) never trap,
/// every refusal has its code, its counter and its report, a refused message changes no
/// state, what the bridge would publish is always publishable, the bookkeeping stays
/// within its bounds, and the valid positions and commands among the garbage give
/// exactly what they give alone.
///
/// What it found is kept in focused tests: identifiers and response topics read byte by
/// byte (`IdentifierTests`, `LaneCoreCommandTests`), owners by their first MQTT level and
/// ties in eviction broken by identifier (`LaneCoreTests`).
@Suite("Lane core: hostile input")
struct LaneCoreHostileInputTests {
    /// Each message handled alone (a burst of one), checked by itself and against the
    /// clean lane; ticks now and then, and now and then a long pause (previews expire,
    /// idle devices may be evicted).
    @Test("message by message, garbage is refused with its code and changes nothing", arguments: [1, 2, 3] as [UInt64])
    func messageByMessage(seed: UInt64) throws {
        var run = try HostileRun(seed: seed)
        var traffic = HostileTraffic(seed: seed, now: run.hostile.now)
        for number in 0..<2_500 where run.failures == 0 {
            run.pass(seconds: Double(traffic.below(16)), tick: number % 8 == 0 || traffic.chance(2))
            if traffic.chance(1) { run.pass(seconds: Double(400 + traffic.below(600)), tick: true) }
            traffic.now = run.hostile.now
            run.send(traffic.next())
            if number % 64 == 0 { run.compareEverything() }
        }
        run.compareEverything()
        run.compareLazySaves()
        run.expectMix()
    }

    /// Bursts of up to 32 messages, as the network thread hands a lane what arrived
    /// together: a device's positions are sorted by time among garbage, and commands
    /// cut the burst into parts.
    @Test("in bursts as the bridge batches them, garbage changes nothing")
    func inBursts() throws {
        var run = try HostileRun(seed: 4)
        var traffic = HostileTraffic(seed: 4, now: run.hostile.now)
        var sent = 0
        while sent < 3_000 && run.failures == 0 {
            run.pass(seconds: Double(traffic.below(30)), tick: traffic.chance(50))
            traffic.now = run.hostile.now
            let size = 1 + traffic.below(32)
            run.send(burst: (0..<size).map { _ in traffic.next() })
            sent += size
            run.compareEverything()
        }
        run.compareLazySaves()
        run.expectMix()
    }

    /// Encrypted positions of devices without a key are reported once a device, and the
    /// devices remembered as reported are bounded: a flood of made-up devices is counted
    /// in full but reported at most `reportedOnceKept` times.
    @Test func aFloodOfDevicesWithoutAKeyIsCountedInFullAndReportedBoundedly() throws {
        var run = try HostileRun(seed: 5)
        let flood = LaneCore.reportedOnceKept + 100
        var reports = 0
        for number in 0..<flood where run.failures == 0 {
            let message = MQTTMessage(
                topic: "owntracks/flood/\(number)", payload: HostileTraffic.envelope(data: OwnTracksDecryptionTests.pinned))
            reports += run.send(message).direct.count
        }
        run.compareEverything()
        #expect(reports == LaneCore.reportedOnceKept)
        #expect(run.hostile.core.reportedOnce.count == LaneCore.reportedOnceKept)
        #expect(run.outcomes["position refused: no_decryption_key"] == flood)
    }

    /// A new device refused at a limit is counted every time and reported once for each
    /// limit, and the limits remembered as reported are bounded too: a flood of owners,
    /// each at its own limit, is counted in full but reported at most `reportedOnceKept`
    /// times (on `geotify/error` and in the log alike).
    @Test func aFloodOfOwnersAtTheirLimitsIsCountedInFullAndReportedBoundedly() throws {
        var lane = try LaneFixture(fences: LaneCoreTests.fences) {
            $0.maximumDevicesPerOwner = 1
            $0.maximumDevices = 4_096
        }
        let owners = LaneCore.reportedOnceKept + 100
        var refused = 0
        var reports = 0
        var lines = 0
        for owner in 0..<owners {
            #expect(lane.ownTracks("flood\(owner)/phone", 52.52, 13.405).counters[.errors(.tooManyDevices)] == 0)
            let effects = lane.ownTracks("flood\(owner)/watch", 52.52, 13.405)
            refused += effects.counters[.errors(.tooManyDevices)]
            reports += effects.direct.filter { $0.topic == "geotify/error" && String(decoding: $0.payload, as: UTF8.self).contains("too_many_devices") }.count
            lines += effects.log.filter { $0.message.contains("errors.too_many_devices") }.count
        }
        #expect(refused == owners)
        #expect(reports == LaneCore.reportedOnceKept)
        #expect(lines == LaneCore.reportedOnceKept)
        #expect(lane.core.reportedOnce.count == LaneCore.reportedOnceKept)
    }
}
