import Foundation
import GeotifyBridge

/// What the side-by-side scenario runs (`--rounds`, `--devices`, `--fences`,
/// `--messages`, `--latency-rate`, `--publisher-segment`, `--publisher-mqttclient`, `--broker-nodelay`, `--tls`, `--device-topics`, `--geotify`) and where it keeps what it made (`--sidebyside-json`,
/// `--sidebyside-dir`, `--perf`). Unset counts follow `--quick`.
struct SideBySideOptions: Sendable {
    /// The most seconds of fix time a device's fixes may span: they are 30 s apart and
    /// end ten minutes before the run, and the bridge drops fixes older than a day.
    static let maximumSpan = 80_000

    var rounds: Int?
    var devices = 1_000
    var fencesPerDevice = 20
    var messages: Int?
    var geotify: String?
    var jsonPath: String?
    var directory: String?
    /// Whether the brokers run with `set_tcp_nodelay true` (mosquitto's default is false).
    var brokerNoDelay = false
    /// Whether the consumers (mosquitto_sub and the bridge) connect over TLS (`--tls`).
    var tls = false
    /// The rate of the latency run; nil: half the bridge's median rate.
    var latencyRate: Double?
    /// The maximum segment size of the latency run's publisher in bytes (`SocketPublisher`):
    /// a real link's by default; nil (`--publisher-segment 0`): loopback's own, 65 483.
    var publisherSegment: Int? = 1_448
    /// Whether the latency run publishes through an `MQTTClient` (libmosquitto, its
    /// writes gathered: how the runs before the thirty-third session published;
    /// `--publisher-segment` does not apply) instead of a `SocketPublisher`.
    var publisherIsMQTTClient = false
    /// The bridge's `deviceTopics` (`--device-topics state,badge`); nil: its default, all.
    var deviceTopics: [DeviceTopic]?
    /// Where a profile of one more bridge run goes, if anywhere.
    var perfDirectory: String?

    /// Rounds to run: each measures both consumers once, in alternating order.
    func rounds(quick: Bool) -> Int { rounds ?? (quick ? 1 : 3) }

    /// Location messages to publish (before the sentinels).
    func messages(quick: Bool) -> Int { messages ?? (quick ? 50_000 : 200_000) }

    /// The bridge binary: `--geotify`, else `geotify` beside this program.
    var geotifyPath: String {
        geotify ?? (Bundle.main.executableURL?.deletingLastPathComponent().appendingPathComponent("geotify").path ?? "geotify")
    }
}
