import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import GeotifyTime
import Synchronization
import Testing

/// Reconnection against a real broker: every failure is retried with backoff, including
/// those that end libmosquitto's own network thread for good (an MQTT v5 refusal), and
/// each change is reported once, not once per retry.
@Suite("MQTTClient reconnection", .timeLimit(.minutes(1)), .waiting)
struct MQTTClientReconnectTests {
    @Test("a refused client keeps retrying (v5 too), reports the refusal once, and connects once the broker accepts it",
          arguments: [MQTTProtocolVersion.v311, .v5])
    func retriesAfterRefusal(version: MQTTProtocolVersion) throws {
        let directory = try makeTemporaryDirectory("refused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let passwords = try BrokerPasswordFile(
            path: directory.appendingPathComponent("passwd").path, users: ["alice": "old-password"])
        let broker = try TestBroker(extraConfig: passwords.brokerConfig)

        // Retries wait for their backoff on the test's clock, moved on while the test waits.
        let clock = ManualScheduler()
        let fixture = try ClientFixture(port: broker.port, clock: clock) {
            $0.protocolVersion = version
            $0.username = "alice"
            $0.password = "new-password"
        }
        // libmosquitto's own thread would have given up after the first v5 refusal.
        let refusedThrice = waitUntil(advancing: clock, by: 3, timeout: 20) { broker.refusedLogins >= 3 }
        #expect(refusedThrice, "\(broker.log)")
        let refusalEvents = fixture.events.all.filter { event in
            if case .connectionRefused = event { return true }
            return false
        }
        #expect(refusalEvents.count == 1, "\(fixture.events.all)")
        #expect(!fixture.client.isConnected)

        // The operator fixes the password file; mosquitto reads it when it starts.
        try passwords.set("alice", password: "new-password")
        try broker.restart()
        #expect(waitUntil(advancing: clock, by: 3, timeout: 20) { fixture.client.isConnected }, "\(fixture.events.all)")
        #expect(fixture.events.waitForConnected(timeout: 20) != nil, "\(fixture.events.all)")
        fixture.client.stop()
    }

    @Test("a broker that stays down is reported once; on its return the session is resumed and queued messages arrive")
    func brokerDownThenBack() throws {
        let broker = try TestBroker(persistence: true)
        let id = "geotify-down-\(UUID().uuidString.prefix(8))"
        let topic = uniqueTopic("down")
        let clock = ManualScheduler()
        let fixture = try ClientFixture(port: broker.port, clock: clock) {
            $0.clientID = id
            $0.cleanSession = false
        }
        try fixture.waitConnected()
        let subscription = try fixture.client.subscribe(topic, qos: 1)
        #expect(fixture.events.waitForSubscribed(subscription) == [1])
        let mark = fixture.events.count

        broker.stop()
        // The lost connection, then "connection refused" while nothing listens: two
        // changes, however many attempts fail meanwhile. Each attempt waits for its
        // backoff on the test's clock: move it past the delay, and wait for the attempt
        // to end (the next one is then scheduled).
        func nextAttempt() {
            #expect(waitUntil { clock.pendingCount == 1 }, "a reconnect is scheduled")
            clock.advance(by: 3)
        }
        nextAttempt()
        let refused = fixture.events.waitFor(after: mark) { event -> String? in
            if case .disconnected(_, let reason) = event, reason.lowercased().contains("refused") { return reason }
            return nil
        }
        #expect(refused != nil, "\(fixture.events.all)")
        for _ in 0..<3 { nextAttempt() }
        #expect(waitUntil { clock.pendingCount == 1 }, "three more attempts failed alike")
        let disconnects = fixture.events.all.dropFirst(mark).filter { event in
            if case .disconnected = event { return true }
            return false
        }
        #expect(disconnects.count == 2, "\(fixture.events.all)")

        try broker.restart()
        let publisher = try TestClient(port: broker.port)
        try publisher.publish(topic, "while you were away", qos: 1)
        clock.advance(by: 3)
        #expect(fixture.events.waitForConnected(after: mark, timeout: 15) == true, "session resumed")
        let delivered = fixture.events.waitFor(after: mark) { event -> String? in
            if case .message(let message) = event, message.topic == topic { return message.text }
            return nil
        }
        #expect(delivered == "while you were away")
        fixture.client.stop()
    }

    /// A failure is kept quiet only while it repeats with no connection accepted in
    /// between: once the broker has accepted one, the same failure is news again. Else a
    /// broker that went down a second time (or refused the bridge a second time) would
    /// leave the client retrying with nothing said about why.
    @Test("a failure like an earlier one is reported again after a connection was accepted in between")
    func aFailureAfterAConnectionIsReportedAgain() throws {
        let broker = try TestBroker()
        let clock = ManualScheduler()
        let fixture = try ClientFixture(port: broker.port, clock: clock)
        try fixture.waitConnected()
        func nextAttempt() {
            #expect(waitUntil { clock.pendingCount == 1 }, "a reconnect is scheduled")
            clock.advance(by: 3)
        }
        func refused(after mark: Int) -> String? {
            fixture.events.waitFor(after: mark) { event -> String? in
                if case .disconnected(_, let reason) = event, reason.lowercased().contains("refused") { return reason }
                return nil
            }
        }
        // First outage: the lost connection, then the refused attempt.
        let first = fixture.events.count
        broker.stop()
        nextAttempt()
        let firstRefusal = refused(after: first)
        #expect(firstRefusal != nil, "\(fixture.events.all)")

        try broker.restart()
        let back = fixture.events.count
        nextAttempt()
        #expect(fixture.events.waitForConnected(after: back) != nil, "\(fixture.events.all)")

        // Second outage, alike: reported again, not taken for a repeat of the first.
        let second = fixture.events.count
        broker.stop()
        nextAttempt()
        #expect(refused(after: second) == firstRefusal, "\(fixture.events.all)")
        fixture.client.stop()
    }

    @Test("stop() during the backoff after a lost connection returns and nothing reconnects afterwards")
    func stopDuringBackoff() throws {
        let broker = try TestBroker()
        let clock = ManualScheduler()
        let fixture = try ClientFixture(port: broker.port, clock: clock) {
            $0.reconnectDelayMin = 5
            $0.reconnectDelayMax = 10
        }
        try fixture.waitConnected()
        let mark = fixture.events.count
        broker.stop()
        #expect(fixture.events.waitFor(after: mark) { event -> Bool? in
            if case .disconnected = event { return true }
            return nil
        } == true)
        #expect(waitUntil { clock.pendingCount == 1 }, "the reconnect waits for its backoff")
        fixture.client.stop()
        let stopped = fixture.events.count
        let logged = broker.log.count
        try broker.restart()
        // The backoff passes (on the test's clock, at once): the attempt it was waiting
        // for must not be made after the stop.
        clock.advance(by: 60)
        #expect(clock.pendingCount == 0)
        #expect(fixture.events.count == stopped, "\(fixture.events.all)")
        #expect(!broker.log.dropFirst(logged).contains("New client connected"), "\(broker.log)")
    }

    /// A lost connection is reported, and so is the first attempt after it that fails,
    /// even when it fails with the same code (the connection lost): the loss is not a
    /// failure the attempt repeats, so the bridge says that it cannot reach the broker
    /// (only further failures of the same kind are quiet). The attempt, closed before
    /// the broker answered its CONNECT, says so (`MQTTEvent.closedUnanswered`).
    @Test("the first failed attempt after a lost connection is reported, even when it fails as the connection ended")
    func theFirstFailureAfterALossIsReported() throws {
        let broker = try ClosingBroker()
        let clock = ManualScheduler()
        let fixture = try ClientFixture(port: broker.port, clock: clock)
        defer { fixture.client.stop() }
        let lost = fixture.events.waitFor { event -> (Int, String)? in
            if case .disconnected(let code, let reason) = event { return (code, reason) }
            return nil
        }
        // MOSQ_ERR_CONN_LOST
        #expect(lost?.0 == 7, "\(fixture.events.all)")
        #expect(waitUntil { clock.pendingCount == 1 })
        let mark = fixture.events.count
        clock.advance(by: 3)
        let failed = fixture.events.waitFor(after: mark) { event -> (Int, String)? in
            if case .disconnected(let code, let reason) = event { return (code, reason) }
            return nil
        }
        #expect(failed?.0 == lost?.0 && failed?.1 == MQTTEvent.closedUnanswered, "\(fixture.events.all)")
        #expect(lost?.1 == "The connection was lost.", "\(fixture.events.all)")
        #expect(broker.connections == 2)
    }
}

/// A stand-in broker that accepts its first client (a successful CONNACK) and closes the
/// connection at once, then closes every later connection as soon as its CONNECT has
/// come: to the client, the connection is lost, and each attempt after it ends the same
/// way. Each CONNECT is read whole first, so that every close is an orderly one (a
/// close with unread bytes would be a reset, another failure).
private final class ClosingBroker: Sendable {
    let port: Int
    private let listener: Int32
    /// How many connections it has closed, shared with the serving thread.
    private let accepted = Count()

    private final class Count: Sendable {
        let value = Mutex(0)
    }

    /// How many connections it has closed.
    var connections: Int { accepted.value.withLock { $0 } }

    init() throws {
        let (listener, port) = try listenOnLoopback()
        self.listener = listener
        self.port = port
        Thread.detachNewThread { [accepted] in
            defer { close(listener) }
            var buffer = [UInt8](repeating: 0, count: 1_024)
            while true {
                var connection: Int32
                repeat { connection = accept(listener, nil, nil) } while connection < 0 && errno == EINTR
                guard connection >= 0 else { return }
                var bytes: [UInt8] = []
                while MQTTFraming.packetEnd(bytes, from: 0) == nil {
                    let count = read(connection, &buffer, buffer.count)
                    guard count > 0 else { break }
                    bytes += buffer[0..<count]
                }
                let first = accepted.value.withLock { count in
                    count += 1
                    return count == 1
                }
                if first {
                    let connack: [UInt8] = [0x20, 0x02, 0x00, 0x00]
                    _ = write(connection, connack, connack.count)
                }
                close(connection)
            }
        }
    }

    /// Stops listening; the serving thread then closes the socket and ends.
    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
    }
}
