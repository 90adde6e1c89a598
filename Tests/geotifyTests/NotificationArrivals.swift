import Dispatch
import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import Synchronization

/// A subscriber that notes when each notification arrives, on the monotonic clock, the
/// moment its client thread receives it: the end of a publish-to-notification latency.
final class NotificationArrivals: Sendable {
    /// Arrival times by event id, shared with the client's event handler.
    private final class Ledger: Sendable {
        let times = Mutex<[String: UInt64]>([:])
        let arrived = DispatchSemaphore(value: 0)
        let recorder = EventRecorder()

        @Sendable
        func record(_ event: MQTTEvent) {
            let now = DispatchTime.now().uptimeNanoseconds
            if case .message(let message) = event, let id = NotificationArrivals.id(message.payload) {
                times.withLock { $0[id] = now }
                arrived.signal()
            }
            recorder.record(event)
        }
    }

    private let ledger = Ledger()
    private let client: MQTTClient

    /// Subscribes to `filter` (`<prefix>/event/#`) on the broker on 127.0.0.1:`port`.
    init(port: Int, filter: String) throws {
        var options = MQTTOptions(clientID: "arrivals-\(UUID().uuidString.prefix(8))", port: port)
        options.cleanSession = true
        client = try MQTTClient(options: options, onEvent: ledger.record)
        try client.start()
        guard ledger.recorder.waitForConnected() != nil else { throw TestSupportError("the latency subscriber did not connect") }
        let messageID = try client.subscribe(filter, qos: 1)
        guard ledger.recorder.waitForSubscribed(messageID) != nil else { throw TestSupportError("no SUBACK for \(filter)") }
    }

    deinit {
        client.stop()
    }

    /// Waits up to `timeout` seconds for the notification `id`; when it arrived, in
    /// nanoseconds of uptime, or nil.
    func waitFor(_ id: String, timeout: Double = 10) -> UInt64? {
        let deadline = DispatchTime.now() + timeout
        while true {
            if let time = ledger.times.withLock({ $0[id] }) { return time }
            if ledger.arrived.wait(timeout: deadline) == .timedOut { return ledger.times.withLock { $0[id] } }
        }
    }

    /// The event id that leads a notification's JSON (`{"id":"...`).
    private static func id(_ payload: [UInt8]) -> String? {
        let prefix = Array(#"{"id":""#.utf8)
        guard payload.starts(with: prefix), let end = payload[prefix.count...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: payload[prefix.count..<end], as: UTF8.self)
    }
}
