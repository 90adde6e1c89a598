import Foundation
@testable import GeotifyBridge
import GeotifyMQTT
import GeotifyStore
import GeotifyTestSupport
import Synchronization
import Testing

/// The publisher through a real mosquitto: what it keeps in memory is bounded, and what
/// does not fit waits in the outbox and still goes out, every message once and in order.
@Suite("Publisher through mosquitto")
struct PublisherTests {
    @Test func aBacklogBeyondTheLimitWaitsInTheOutboxAndGoesOutInOrder() throws {
        let broker = try TestBroker()
        let directory = try makeTemporaryDirectory("publisher")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try StateStore(directory: directory.path)
        let counters = Counters()
        let logger = Logger(level: .error, sink: { _ in })
        let health = StateHealth(logger: logger, counters: counters, messages: OutboundMessages(topics: Topics()), uptime: { 0 })
        let publisher = Publisher(logger: logger, counters: counters, health: health, waitingLimit: 10)
        let client = try MQTTClient(options: MQTTOptions(clientID: "spill-\(UUID().uuidString.prefix(8))", port: broker.port)) { event in
            switch event {
            case .connected: publisher.connected()
            case .published(let id): publisher.acknowledged(id)
            case .caughtUp: publisher.pump()
            case .disconnected: publisher.disconnected()
            default: break
            }
        }
        publisher.attach(client, store: store)
        let observer = try TestClient(port: broker.port)
        try observer.subscribe("spill/#")

        // While the broker is not yet connected, 100 messages are decided: 10 wait in
        // memory, the rest only in the outbox.
        let messages = (0..<100).map { OutboxMessage(topic: "spill/\($0)", payload: Array("\($0)".utf8), qos: 1, retain: false) }
        for chunk in stride(from: 0, to: messages.count, by: 25) {
            let batch = Array(messages[chunk..<chunk + 25])
            try store.save(devices: [], outbox: batch, then: { ids in publisher.queue(batch, outboxIDs: ids) })
            publisher.pump()
        }
        #expect(publisher.unacknowledged == 10, "only the limit waits in memory")
        try client.start()
        let received = observer.waitForMessages(on: "spill/#", count: 100)
        #expect(received.map(\.text) == (0..<100).map(String.init), "every message once, in order")
        #expect(waitUntil { publisher.unacknowledged == 0 })
        client.stop()
    }

    /// What the lanes do: save on the network thread, at the end of each burst, while the
    /// publisher is reading a spill back from the outbox. Handing over inside the save
    /// would read the outbox under the store's own lock (once, the process stopped there).
    @Test func savesWhileASpillIsReadBackKeepTheOrder() throws {
        let broker = try TestBroker()
        let directory = try makeTemporaryDirectory("publisher")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try StateStore(directory: directory.path)
        let counters = Counters()
        let logger = Logger(level: .error, sink: { _ in })
        let health = StateHealth(logger: logger, counters: counters, messages: OutboundMessages(topics: Topics()), uptime: { 0 })
        let publisher = Publisher(logger: logger, counters: counters, health: health, waitingLimit: 10)
        let backlog = 300, later = 50
        let decided = Atomic<Int>(backlog)
        let client = try MQTTClient(options: MQTTOptions(clientID: "spill-\(UUID().uuidString.prefix(8))", port: broker.port)) { event in
            switch event {
            case .connected: publisher.connected()
            case .published(let id): publisher.acknowledged(id)
            case .caughtUp:
                // One more message decided per burst, as a lane would.
                let next = decided.add(1, ordering: .relaxed).oldValue
                if next < backlog + later {
                    let message = [OutboxMessage(topic: "spill/\(next)", payload: Array("\(next)".utf8), qos: 1, retain: false)]
                    try? store.save(devices: [], outbox: message, then: { ids in publisher.queue(message, outboxIDs: ids) })
                }
                publisher.pump()
            case .disconnected: publisher.disconnected()
            default: break
            }
        }
        publisher.attach(client, store: store)
        let observer = try TestClient(port: broker.port)
        try observer.subscribe("spill/#")

        // 300 decided while offline: more than the window (100) and the limit (10), so
        // the outbox is still being read back when the later ones are decided.
        let messages = (0..<backlog).map { OutboxMessage(topic: "spill/\($0)", payload: Array("\($0)".utf8), qos: 1, retain: false) }
        try store.save(devices: [], outbox: messages, then: { ids in publisher.queue(messages, outboxIDs: ids) })
        publisher.pump()
        try client.start()
        let received = observer.waitForMessages(on: "spill/#", count: backlog + later)
        #expect(received.map(\.text) == (0..<backlog + later).map(String.init), "every message once, in row order")
        client.stop()
    }
}
