import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import Synchronization

/// A test client that survives what a bridge must survive: it keeps a persistent session
/// (so the broker queues for it while it is away), subscribes again on every connection,
/// and publishes reliably across a broker restart. It can also speak TLS and log in,
/// which `TestClient` does not. It records every event, so tests wait (bounded) on what
/// they expect.
final class BrokerObserver: Sendable {
    let events = EventRecorder()
    private let holder = Holder()

    /// The client, set once it is made; a class so the event closure can share it.
    private final class Holder: Sendable {
        let client = Mutex<MQTTClient?>(nil)
    }

    /// Connects to 127.0.0.1:`port` as `clientID` and subscribes to `filters` (QoS 1) on
    /// every connection; `configure` adds TLS or credentials. Waits up to 10 s for the
    /// first subscription to be acknowledged (or, without filters, for the connection).
    init(
        port: Int, subscribe filters: [String], clientID: String = "observer-\(UUID().uuidString.prefix(8))",
        configure: (inout MQTTOptions) -> Void = { _ in }
    ) throws {
        var options = MQTTOptions(clientID: clientID, port: port)
        options.cleanSession = false
        // Back within 50-500 ms after the broker a test restarted.
        options.reconnectDelayMin = 0.05
        options.reconnectDelayMax = 0.5
        configure(&options)
        let events = events
        let holder = holder
        let made = try MQTTClient(options: options) { event in
            events.record(event)
            if case .connected = event, let client = holder.client.withLock({ $0 }) {
                for filter in filters { _ = try? client.subscribe(filter, qos: 1) }
            }
        }
        holder.client.withLock { $0 = made }
        try made.start()
        let ready = events.waitFor { event -> Bool? in
            switch event {
            case .subscribed: return true
            case .connected where filters.isEmpty: return true
            default: return nil
            }
        }
        guard ready == true else {
            made.stop()
            throw TestSupportError("the observer did not get ready on port \(port): \(events.all)")
        }
    }

    deinit {
        holder.client.withLock { $0 }?.stop()
    }

    /// Publishes `payload` with QoS 1, once connected, and waits (up to `timeout` s) for
    /// the broker's acknowledgement. A message in flight when the connection drops, or
    /// published while it is down, libmosquitto keeps (`MQTTError.keptMessageID`) and
    /// sends again on reconnecting, so the acknowledgement is the event to wait for. But
    /// not one published in the middle of the reconnection that succeeds: libmosquitto
    /// 2.0.11 marks what it holds to be sent again (`message__reconnect_reset`) before it
    /// has a socket, and a message published between that and the socket is marked as
    /// sent and waits for an acknowledgement that never comes (once in 18 runs of the
    /// suite under load, the broker-restart test's tracker). So a publish waits for the
    /// connection first. (The bridge's publisher publishes only between the client's
    /// `connected` and `disconnected` events, both on the network thread that
    /// reconnects.)
    func publish(_ topic: String, _ payload: String, timeout: Double = 30) throws {
        guard let client = holder.client.withLock({ $0 }) else { throw TestSupportError("no client") }
        guard waitUntil(timeout: timeout, { client.isConnected }) else {
            throw TestSupportError("not connected, to publish to \(topic): \(events.all.suffix(5))")
        }
        let messageID: Int32
        do throws(MQTTError) {
            messageID = try client.publish(topic: topic, payload: Array(payload.utf8), qos: 1, retain: false)
        } catch {
            guard let kept = error.keptMessageID else { throw error }
            messageID = kept
        }
        guard events.waitForPublished(messageID, timeout: timeout) else {
            throw TestSupportError("no acknowledgement for the publish to \(topic): \(events.all.suffix(5))")
        }
    }

    /// The messages received on topics starting with `prefix`, oldest first.
    func messages(under prefix: String) -> [MQTTMessage] {
        events.messages.filter { $0.topic.hasPrefix(prefix) }
    }

    /// The ids of the notifications received (`geotify/event/...`), without the repeats
    /// at-least-once delivery may bring, in the order they first came, by device.
    func notificationIDs() -> [String: [String]] {
        var seen = Set<String>()
        var byDevice: [String: [String]] = [:]
        for message in messages(under: "geotify/event/") {
            guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
                  let id = object["id"] as? String, let device = object["device"] as? String,
                  seen.insert(id).inserted
            else { continue }
            byDevice[device, default: []].append(id)
        }
        return byDevice
    }
}
