import Foundation
import GeotifyMQTT

/// A subscriber that counts the messages arriving on its filters, notes when the last
/// one came and, while recording, how long each took from the send time embedded in it
/// (its `"tst"`, wall-clock seconds written by the publishers in this process) to its
/// arrival here. Messages on its kept topics (status, statistics) are not counted; the
/// last one of each is kept, and while recording every one.
final class ArrivalObserver: Sendable {
    private struct Record {
        var count = 0
        var subscribed = 0
        var latencies: [Double] = []
        /// Only messages sent at or after this wall-clock time are timed.
        var recordingSince = Double.infinity
        /// When the last counted message arrived, on `BenchClock.now()`.
        var lastArrival: Double?
        var kept: [String: [UInt8]] = [:]
        /// Every message on each kept topic since recording started.
        var keptWhileRecording: [String: [[UInt8]]] = [:]
    }

    private let record: Locked<Record>
    private let client: MQTTClient

    /// Connects to the broker on `port` and subscribes to `filters` and `keptTopics` at
    /// QoS 1. Messages on `keptTopics` are not counted; the last one of each is kept (see
    /// `last(on:)`).
    init(port: Int, filters: [String], keptTopics: [String] = []) throws {
        let record = Locked(Record())
        self.record = record
        var options = MQTTOptions(clientID: "geotify-bench-observer-\(getpid())", port: port)
        options.cleanSession = true
        client = try MQTTClient(options: options) { event in
            switch event {
            case .message(let message):
                let arrival = BenchClock.wall()
                let monotonic = BenchClock.now()
                if keptTopics.contains(message.topic) {
                    record.withLock { record in
                        record.kept[message.topic] = message.payload
                        if record.recordingSince.isFinite { record.keptWhileRecording[message.topic, default: []].append(message.payload) }
                    }
                    return
                }
                let sent = ArrivalObserver.sendTime(in: message.payload)
                record.withLock { record in
                    record.count += 1
                    record.lastArrival = monotonic
                    if let sent, sent >= record.recordingSince { record.latencies.append(arrival - sent) }
                }
            case .subscribed:
                record.withLock { $0.subscribed += 1 }
            default:
                break
            }
        }
        try client.start()
        guard BenchClock.wait(timeout: 10, until: { client.isConnected }) else {
            throw BenchError("the observer could not connect to 127.0.0.1:\(port)")
        }
        for filter in filters + keptTopics { try client.subscribe(filter, qos: 1) }
        let expected = filters.count + keptTopics.count
        guard BenchClock.wait(timeout: 10, until: { record.withLock { $0.subscribed } >= expected }) else {
            throw BenchError("the observer's subscriptions were not acknowledged")
        }
    }

    /// Messages counted so far.
    var count: Int { record.withLock { $0.count } }

    /// When the last counted message arrived, on `BenchClock.now()`.
    var lastArrival: Double? { record.withLock { $0.lastArrival } }

    /// The payload of the last message on `topic`, one of the kept topics.
    func last(on topic: String) -> [UInt8]? {
        record.withLock { $0.kept[topic] }
    }

    /// The last message on `topic` (a kept topic) as text.
    func lastText(on topic: String) -> String? {
        last(on: topic).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Starts timing messages sent from `wallTime` on, discarding earlier samples (and
    /// the kept topics' messages kept while recording).
    func startRecording(since wallTime: Double) {
        record.withLock {
            $0.latencies.removeAll()
            $0.keptWhileRecording.removeAll()
            $0.recordingSince = wallTime
        }
    }

    /// Every message on `topic` (a kept topic) that arrived while recording, in order.
    func keptWhileRecording(on topic: String) -> [[UInt8]] {
        record.withLock { $0.keptWhileRecording[topic] ?? [] }
    }

    /// Stops timing and returns the latencies recorded, in seconds.
    func stopRecording() -> [Double] {
        record.withLock {
            $0.recordingSince = .infinity
            return $0.latencies
        }
    }

    func stop() {
        client.stop()
    }

    /// The number after the last `"tst":` in a JSON payload.
    static func sendTime(in payload: [UInt8]) -> Double? {
        let key = Array(#""tst":"#.utf8)
        guard payload.count > key.count else { return nil }
        var start = payload.count - key.count
        while start >= 0 {
            if payload[start] == key[0] && Array(payload[start..<(start + key.count)]) == key { break }
            start -= 1
        }
        guard start >= 0 else { return nil }
        var end = start + key.count
        let numberStart = end
        while end < payload.count, let character = Optional(payload[end]),
              (character >= UInt8(ascii: "0") && character <= UInt8(ascii: "9")) || character == UInt8(ascii: ".") {
            end += 1
        }
        return Double(String(decoding: payload[numberStart..<end], as: UTF8.self))
    }
}
