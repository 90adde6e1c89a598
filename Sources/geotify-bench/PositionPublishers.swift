import Foundation
import GeotifyMQTT

/// Devices' phones, as far as the broker can tell: MQTT clients publishing OwnTracks
/// positions at QoS 1 (as the app does; the side-by-side scenario uses QoS 0) at a paced
/// rate, each message stamped with its send time as `tst` just before it goes out.
final class PositionPublishers {
    /// A message ready to go but for its send time: the payload up to `"tst":`.
    struct Prepared: Sendable {
        var topic: String
        var prefix: [UInt8]
    }

    /// How a paced send went.
    struct Report: Sendable {
        /// Messages handed to the clients.
        var sent: Int
        /// Messages the clients refused.
        var failed: Int
        /// How far behind its schedule the last message went out, in seconds: above a
        /// few milliseconds the publishers, not the system under test, set the pace.
        var lag: Double
    }

    private let clients: [MQTTClient]
    private let qos: Int

    /// Connects `count` clients that publish at `qos` to the broker on `port`.
    init(port: Int, count: Int, qos: Int = 1) throws {
        self.qos = qos
        var clients: [MQTTClient] = []
        for index in 0..<count {
            var options = MQTTOptions(clientID: "geotify-bench-publisher-\(getpid())-\(index)", port: port)
            options.cleanSession = true
            let client = try MQTTClient(options: options) { _ in }
            try client.start()
            clients.append(client)
        }
        guard BenchClock.wait(timeout: 10, until: { clients.allSatisfy(\.isConnected) }) else {
            throw BenchError("the publishers could not connect to 127.0.0.1:\(port)")
        }
        self.clients = clients
    }

    /// Publishes `messages` at `rate` per second, spread over the clients, each on its
    /// own thread; returns when all are handed over.
    func send(_ messages: [Prepared], rate: Double) -> Report {
        let start = BenchClock.now()
        let totals = Locked(Report(sent: 0, failed: 0, lag: 0))
        let group = DispatchGroup()
        let clientCount = clients.count
        let qos = qos
        for (lane, client) in clients.enumerated() {
            group.enter()
            Thread.detachNewThread {
                var sent = 0
                var failed = 0
                var lag = 0.0
                var payload: [UInt8] = []
                for number in stride(from: lane, to: messages.count, by: clientCount) {
                    let due = start + Double(number) / rate
                    var now = BenchClock.now()
                    while now < due {
                        usleep(UInt32(min(1_000, max(50, (due - now) * 1e6))))
                        now = BenchClock.now()
                    }
                    lag = now - due
                    payload.removeAll(keepingCapacity: true)
                    payload.append(contentsOf: messages[number].prefix)
                    PositionPublishers.appendTime(BenchClock.wall(), to: &payload)
                    payload.append(UInt8(ascii: "}"))
                    do {
                        try client.publish(topic: messages[number].topic, payload: payload, qos: qos, retain: false)
                        sent += 1
                    } catch {
                        failed += 1
                    }
                }
                totals.withLock {
                    $0.sent += sent
                    $0.failed += failed
                    $0.lag = max($0.lag, lag)
                }
                group.leave()
            }
        }
        group.wait()
        return totals.value
    }

    func stop() {
        for client in clients { client.stop() }
    }

    /// Appends wall-clock `seconds` with microseconds: 1764000000.123456.
    static func appendTime(_ seconds: Double, to bytes: inout [UInt8]) {
        let whole = Int(seconds)
        let micros = Int((seconds - Double(whole)) * 1e6)
        bytes.append(contentsOf: String(whole).utf8)
        bytes.append(UInt8(ascii: "."))
        let fraction = String(micros)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: 6 - fraction.count))
        bytes.append(contentsOf: fraction.utf8)
    }
}
