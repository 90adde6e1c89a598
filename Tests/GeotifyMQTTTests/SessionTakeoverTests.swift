import Foundation
@testable import GeotifyMQTT
import GeotifyTestSupport
import GeotifyTime
import Testing

/// A session taken over is told from other lost connections: at once when an MQTT v5
/// broker says so, else by the broker closing accepted connections right away, again
/// and again. Pure values first, then two clients fighting over one id on mosquitto.
@Suite("Session takeover", .timeLimit(.minutes(2)), .waiting)
struct SessionTakeoverTests {
    let lost = SessionTakeover.closedByBroker

    /// Feeds `endings` (code, seconds connected) to a fresh detector; what it said to each.
    func verdicts(_ endings: [(Int32, Double?)]) -> [Bool] {
        var takeover = SessionTakeover(shortConnection: 30)
        return endings.map { takeover.ended(code: $0.0, connectedFor: $0.1) }
    }

    @Test func anMQTT5TakeoverIsTakenAtItsWord() {
        #expect(verdicts([(0x8E, 3_600)]) == [true])
        #expect(MQTTEvent.disconnected(code: MQTTEvent.sessionTakenOver, reason: "").isSessionTakenOver)
        #expect(!MQTTEvent.disconnected(code: Int(lost), reason: "").isSessionTakenOver)
    }

    @Test func shortConnectionsClosedByTheBrokerAgainAndAgainAreATakeover() {
        // The third in a row is one, every further one too; a connection that lasted
        // ends the pattern.
        #expect(verdicts([(lost, 2), (lost, 4), (lost, 8), (lost, 16), (lost, 30), (lost, 1)])
            == [false, false, true, true, false, false])
    }

    /// An MQTT v5 takeover said outright is an ending of its own kind: it starts the
    /// count of short connections again, so the next short one is not called a takeover
    /// on the strength of those before it ("3 times in a row" would be false).
    @Test func anMQTT5TakeoverStartsTheCountAgain() {
        #expect(verdicts([(lost, 2), (lost, 2), (0x8E, 2), (lost, 2), (lost, 2), (lost, 2)])
            == [false, false, true, false, false, true])
    }

    @Test func aBrokerRestartAFlakyNetworkOrOneIntruderIsNot() {
        // A broker restarting: the connection drops, the next attempt fails (14: errno).
        #expect(!verdicts(Array(repeating: [(lost, 5), (14, nil)], count: 5).flatMap { $0 }).contains(true))
        // Keep-alive timeouts (19) are the network, not the broker closing the connection.
        #expect(!verdicts(Array(repeating: (19, 1), count: 5)).contains(true))
        // One intruder, once: the bridge reconnects and stays.
        #expect(verdicts([(lost, 3), (lost, 3_600)]) == [false, false])
    }

    @Test("an MQTT v5 DISCONNECT 0x8E is reported as a session taken over, with the client id")
    func brokerSaysSo() throws {
        let broker = try DisconnectingBroker(reason: 0x8E)
        let fixture = try ClientFixture(port: broker.port) {
            $0.clientID = "geotify"
            $0.protocolVersion = .v5
        }
        defer { fixture.client.stop() }
        let reason = fixture.events.waitFor { event -> String? in
            guard case .disconnected(MQTTEvent.sessionTakenOver, let reason) = event else { return nil }
            return reason
        }
        #expect(reason == #"session taken over: another client connected with client id "geotify" and the broker closed this connection (MQTT v5 reason 0x8E)"#, "\(fixture.events.all)")
    }

    /// libmosquitto reports an MQTT v5 broker's DISCONNECT with reason 0 ("normal
    /// disconnection") with the code of a stop on request, 0, which the bridge does not
    /// log. Unless this client asked to stop, it is the broker closing the connection.
    @Test("an MQTT v5 DISCONNECT with reason 0 that this client did not ask for is the broker closing the connection")
    func brokerEndsNormally() throws {
        let broker = try DisconnectingBroker(reason: 0x00)
        let fixture = try ClientFixture(port: broker.port) { $0.protocolVersion = .v5 }
        defer { fixture.client.stop() }
        let ended = fixture.events.waitFor { event -> (Int, String)? in
            guard case .disconnected(let code, let reason) = event else { return nil }
            return (code, reason)
        }
        #expect(ended?.0 == Int(SessionTakeover.closedByBroker), "\(fixture.events.all)")
        #expect(ended?.1 == "the broker closed the connection (MQTT v5 DISCONNECT, reason 0: normal disconnection)")
    }

    @Test("two clients with one client id on mosquitto: both are told their session was taken over")
    func twinsFighting() throws {
        let broker = try TestBroker()
        defer { broker.stop() }
        let id = "geotify-twin-\(UUID().uuidString.prefix(8))"
        // Both twins reconnect on the test's clock: moving it on whenever one waits for
        // its backoff makes them fight at once instead of over tens of seconds.
        let clock = ManualScheduler()
        let twins = try (0..<2).map { _ in
            try ClientFixture(port: broker.port, clock: clock) {
                $0.clientID = id
                $0.cleanSession = false
                $0.reconnectDelayMax = 4
            }
        }
        defer { for twin in twins { twin.client.stop() } }
        func takenOver(_ twin: ClientFixture) -> String? {
            twin.events.all.lazy.compactMap { event -> String? in
                guard case .disconnected(MQTTEvent.sessionTakenOver, let reason) = event else { return nil }
                return reason
            }.first
        }
        #expect(waitUntil(timeout: 60) {
            if clock.pendingCount > 0 { clock.advance(by: 5) }
            return twins.allSatisfy { takenOver($0) != nil }
        }, "\(twins.map(\.events.all))")
        for twin in twins {
            let reason = takenOver(twin)
            #expect(reason?.hasPrefix("session taken over, most likely: the broker closed the connection right after accepting it, 3 times in a row") == true, "\(twin.events.all)")
            #expect(reason?.hasSuffix("client id \"\(id)\" (and, if its log says \"oversize packet\", when this client sends a packet larger than its max_packet_size)") == true)
        }
    }
}

/// A stand-in for an MQTT v5 broker that ends a client's connection at once: it accepts
/// one connection on 127.0.0.1, answers CONNECT with a successful CONNACK and at once
/// sends DISCONNECT with `reason`: 0x8E ("Session taken over") as mosquitto 2.0.15 does
/// when another client takes over (mosquitto 2.0.11 never sends it), 0x00 ("Normal
/// disconnection") as a broker may on closing a connection for its own reasons.
private final class DisconnectingBroker: Sendable {
    let port: Int

    init(reason: UInt8) throws {
        let (listener, port) = try listenOnLoopback()
        self.port = port
        Thread.detachNewThread {
            defer { close(listener) }
            var connection: Int32
            repeat { connection = accept(listener, nil, nil) } while connection < 0 && errno == EINTR
            guard connection >= 0 else { return }
            defer { close(connection) }
            var buffer = [UInt8](repeating: 0, count: 1_024)
            var count: Int
            repeat { count = read(connection, &buffer, buffer.count) } while count < 0 && errno == EINTR
            guard count > 0 else { return }
            // CONNACK: no session present, success, no properties; DISCONNECT: `reason`,
            // no properties.
            let reply: [UInt8] = [0x20, 0x03, 0x00, 0x00, 0x00, 0xE0, 0x02, reason, 0x00]
            guard write(connection, reply, reply.count) == reply.count else { return }
            // Until the client closes its end.
            while read(connection, &buffer, buffer.count) > 0 {}
        }
    }
}
