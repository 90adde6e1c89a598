import Foundation
import GeotifyMQTT

/// Devices' phones, as far as the broker can tell: MQTT clients publishing OwnTracks
/// positions at QoS 1 (as the app does: `MQTTClient`s) or at QoS 0 over sockets with a
/// chosen segment size (the side-by-side scenario's latency run: `SocketPublisher`) at a
/// paced rate, each message stamped with its send time as `tst` just before it goes out.
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

    /// One connection to the broker.
    private enum Link: Sendable {
        case client(MQTTClient, qos: Int)
        case socket(SocketPublisher)

        func publish(topic: String, payload: [UInt8]) throws {
            switch self {
            case .client(let client, let qos): try client.publish(topic: topic, payload: payload, qos: qos, retain: false)
            case .socket(let socket): try socket.publish(topic: topic, payload: payload)
            }
        }

        func stop() {
            switch self {
            case .client(let client, _): client.stop()
            case .socket(let socket): socket.stop()
            }
        }
    }

    private let links: [Link]

    /// Connects `count` `MQTTClient`s that publish at `qos` to the broker on `port`.
    init(port: Int, count: Int, qos: Int = 1) throws {
        var clients: [MQTTClient] = []
        for index in 0..<count {
            var options = MQTTOptions(clientID: PositionPublishers.clientID(index), port: port)
            options.cleanSession = true
            let client = try MQTTClient(options: options) { _ in }
            try client.start()
            clients.append(client)
        }
        guard BenchClock.wait(timeout: 10, until: { clients.allSatisfy(\.isConnected) }) else {
            throw BenchError("the publishers could not connect to 127.0.0.1:\(port)")
        }
        links = clients.map { .client($0, qos: qos) }
    }

    /// Connects `count` `SocketPublisher`s with segments of `segmentSize` bytes (nil:
    /// loopback's own) to the broker on `port`: QoS 0.
    init(port: Int, count: Int, segmentSize: Int?) throws {
        links = try (0..<count).map {
            .socket(try SocketPublisher(port: port, clientID: PositionPublishers.clientID($0), segmentSize: segmentSize))
        }
    }

    /// The largest segment size the links' kernels use; 0 for `MQTTClient`s (not asked).
    var segmentSize: Int {
        links.map { if case .socket(let socket) = $0 { socket.segmentSize } else { 0 } }.max() ?? 0
    }

    private static func clientID(_ index: Int) -> String { "geotify-bench-publisher-\(getpid())-\(index)" }

    /// Publishes `messages` at `rate` per second, spread over the links, each on its
    /// own thread; returns when all are handed over.
    func send(_ messages: [Prepared], rate: Double) -> Report {
        let start = BenchClock.now()
        let totals = Locked(Report(sent: 0, failed: 0, lag: 0))
        let group = DispatchGroup()
        let linkCount = links.count
        for (lane, link) in links.enumerated() {
            group.enter()
            Thread.detachNewThread {
                var sent = 0
                var failed = 0
                var lag = 0.0
                var payload: [UInt8] = []
                for number in stride(from: lane, to: messages.count, by: linkCount) {
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
                        try link.publish(topic: messages[number].topic, payload: payload)
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
        for link in links { link.stop() }
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
