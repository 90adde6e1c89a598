import GeotifyMQTT
import Testing

@Suite("Connection failures")
struct ConnectionFailureTests {
    let broker = "mqtt://broker.example:1883"

    @Test(arguments: [
        (MQTTEvent.disconnected(code: 14, reason: "Connection refused"), ConnectionFailure.Kind.unreachable),
        (.disconnected(code: 15, reason: "Lookup error."), .unknownHost),
        (.disconnected(code: 8, reason: "A TLS error occurred."), .tls),
        (.disconnected(code: 23, reason: "A TLS handshake failed."), .tls),
        (.disconnected(code: 4, reason: "The client is not currently connected."), .unreachable),
        (.disconnected(code: 5, reason: "The connection was refused."), .unreachable),
        (.connectionRefused(code: 5, reason: "Connection Refused: not authorised."), .refused),
        (.disconnected(code: 7, reason: "The connection was lost."), .other),
    ])
    func eachFailureHasItsKind(event: MQTTEvent, kind: ConnectionFailure.Kind) {
        #expect(ConnectionFailure(event, broker: broker)?.kind == kind)
    }

    @Test func whatIsNoFailureGivesNone() {
        #expect(ConnectionFailure(.connected(sessionPresent: false), broker: broker) == nil)
        #expect(ConnectionFailure(.disconnected(code: 0, reason: "disconnected on request"), broker: broker) == nil)
    }

    @Test func theMessageSaysWhatToCheck() {
        #expect(ConnectionFailure(.disconnected(code: 15, reason: "Lookup error."), broker: broker)?.description
            == "cannot reach the broker at mqtt://broker.example:1883: the host name does not resolve (Lookup error.)")
    }
}
