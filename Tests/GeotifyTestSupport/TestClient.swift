import Foundation
import GeotifyMQTT
import GeotifyTime

/// An MQTT client for tests: connects with a clean session, subscribes and publishes
/// with waits for the broker's acknowledgements, and records every message it receives
/// so a test can wait (bounded) for what it expects to see.
///
/// Thread safety: its state is the `EventRecorder` (behind a mutex) and the
/// `MQTTClient`, which is safe to use from any thread.
package final class TestClient: @unchecked Sendable {
    private let recorder = EventRecorder()
    private let client: MQTTClient

    /// Connects to the broker on 127.0.0.1:`port` and waits up to 10 s for `.connected`.
    /// Reconnect delays are timed by `clock`: the system's unless a test moves a
    /// `ManualScheduler`.
    package init(
        port: Int,
        clientID: String = "test-\(UUID().uuidString.prefix(12))",
        protocolVersion: MQTTProtocolVersion = .v311,
        clock: any Scheduler = SystemScheduler()
    ) throws {
        var options = MQTTOptions(clientID: clientID, port: port)
        options.cleanSession = true
        options.protocolVersion = protocolVersion
        // Back within 50-500 ms after the broker a test restarted.
        options.reconnectDelayMin = 0.05
        options.reconnectDelayMax = 0.5
        client = try MQTTClient(options: options, scheduler: clock, onEvent: recorder.record)
        try client.start()
        guard recorder.waitForConnected() != nil else {
            client.stop()
            throw TestSupportError("test client \(clientID) did not connect to port \(port): \(recorder.all)")
        }
    }

    deinit {
        client.stop()
    }

    /// Subscribes to `filter` and waits up to 10 s for the SUBACK; throws if it does not
    /// come or the broker refuses the filter.
    package func subscribe(_ filter: String, qos: Int = 1) throws {
        let messageID = try client.subscribe(filter, qos: qos)
        guard let granted = recorder.waitForSubscribed(messageID) else {
            throw TestSupportError("no SUBACK for \(filter)")
        }
        guard granted.allSatisfy({ $0 < 128 }) else {
            throw TestSupportError("the broker refused the subscription to \(filter): \(granted)")
        }
    }

    /// Publishes `payload` as UTF-8; for QoS 1 and 2 waits up to 10 s for the broker's
    /// acknowledgement.
    package func publish(_ topic: String, _ payload: String, qos: Int = 1, retain: Bool = false) throws {
        try publish(topic, bytes: Array(payload.utf8), qos: qos, retain: retain)
    }

    /// Publishes raw bytes, with MQTT v5 properties when the client speaks v5; for QoS 1
    /// and 2 waits up to 10 s for the broker's acknowledgement.
    package func publish(
        _ topic: String,
        bytes: [UInt8],
        qos: Int = 1,
        retain: Bool = false,
        correlationData: [UInt8]? = nil,
        responseTopic: String? = nil
    ) throws {
        let messageID = try client.publish(
            topic: topic,
            payload: bytes,
            qos: qos,
            retain: retain,
            correlationData: correlationData,
            responseTopic: responseTopic
        )
        if qos > 0, !recorder.waitForPublished(messageID) {
            throw TestSupportError("no acknowledgement for the publish to \(topic)")
        }
    }

    /// Publishes every `(topic, payload)` of `messages` at QoS 1 without waiting for each
    /// acknowledgement in turn (libmosquitto keeps them in flight), then waits up to
    /// `timeout` seconds for all of them: for traffic of many messages.
    package func publishAll(_ messages: [(topic: String, payload: String)], timeout: Double = 30) throws {
        var pending: Set<Int32> = []
        for (topic, payload) in messages {
            pending.insert(try client.publish(topic: topic, payload: Array(payload.utf8), qos: 1, retain: false))
        }
        let acknowledged = waitUntil(timeout: timeout) {
            for event in recorder.all {
                if case .published(let id) = event { pending.remove(id) }
            }
            return pending.isEmpty
        }
        guard acknowledged else { throw TestSupportError("\(pending.count) of \(messages.count) publishes were not acknowledged") }
    }

    /// Every event the client has recorded (connections and messages), oldest first.
    package var events: [MQTTEvent] { recorder.all }

    /// Every message received so far, oldest first.
    package var messages: [MQTTMessage] {
        recorder.messages
    }

    /// Waits until `count` messages on `topic` (equal to it, or matching it as a filter
    /// with + and #) have arrived or `timeout` seconds passed; returns those that came.
    package func waitForMessages(on topic: String, count: Int, timeout: Double = 10) -> [MQTTMessage] {
        var matching: [MQTTMessage] = []
        waitUntil(timeout: timeout) {
            matching = messages.filter { $0.topic == topic || Self.topic($0.topic, matches: topic) }
            return matching.count >= count
        }
        return matching
    }

    /// Waits up to `timeout` seconds for the first message on `topic` (as in
    /// `waitForMessages`); nil if none came.
    package func waitForMessage(on topic: String, timeout: Double = 10) -> MQTTMessage? {
        waitForMessages(on: topic, count: 1, timeout: timeout).first
    }

    /// Waits up to `timeout` seconds for a message on `topic` that satisfies `condition`;
    /// the first such one, nil if none came.
    package func waitForMessage(on topic: String, timeout: Double = 10, where condition: (MQTTMessage) -> Bool) -> MQTTMessage? {
        var found: MQTTMessage?
        waitUntil(timeout: timeout) {
            found = messages.first { ($0.topic == topic || Self.topic($0.topic, matches: topic)) && condition($0) }
            return found != nil
        }
        return found
    }

    /// Forgets the messages received so far.
    package func clear() {
        recorder.clear()
    }

    /// Disconnects cleanly and stops the client's network thread.
    package func disconnect() {
        client.stop()
    }

    /// MQTT filter matching: `+` matches one level, a final `#` the rest (including none).
    private static func topic(_ topic: String, matches filter: String) -> Bool {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        let patterns = filter.split(separator: "/", omittingEmptySubsequences: false)
        for (index, pattern) in patterns.enumerated() {
            if pattern == "#" {
                return index == patterns.count - 1
            }
            guard index < levels.count, pattern == "+" || pattern == levels[index] else {
                return false
            }
        }
        return levels.count == patterns.count
    }
}
