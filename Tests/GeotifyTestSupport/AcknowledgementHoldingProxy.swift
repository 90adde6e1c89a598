import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 in front of a broker that can hold back the broker's PUBACKs:
/// to a client connected through it, the broker then seems slow to acknowledge what the
/// client publishes at QoS 1, while everything else (CONNACK, SUBACK, the PUBLISHes the
/// broker delivers, PINGRESP) passes at once, and everything the client sends too.
///
/// Why: a test of what a client does with its in-flight window full (the bridge's
/// publisher spilling to its outbox) needs a broker that acknowledges late. mosquitto
/// acknowledges an incoming QoS 1 message at once, and pausing it (`TestBroker.pause()`)
/// also stops the positions the client receives. Holding the acknowledgements makes the
/// window fill for certain, not only when the machine happens to be slow.
///
/// Thread safety: `holding` and the live connections are behind a mutex; each
/// connection's writes to its client (the forwarding thread's and `pass()`'s) are behind
/// the connection's own.
package final class AcknowledgementHoldingProxy: Sendable {
    /// Where clients connect.
    package let port: Int
    private let brokerPort: Int
    private let listener: Int32
    private let state = Mutex<(holding: Bool, connections: [ProxiedConnection])>((false, []))

    /// Listens on 127.0.0.1, on a port the kernel picks, and connects each client that
    /// comes to the broker on `brokerPort`. Nothing is held until `hold()`.
    package init(brokerPort: Int) throws {
        self.brokerPort = brokerPort
        (listener, port) = try listenOnLoopback()
        let thread = Thread { [self] in acceptClients() }
        thread.name = "acknowledgement-holding-proxy"
        thread.start()
    }

    deinit {
        close(listener)
    }

    /// From now on the broker's PUBACKs wait in the proxy (and go with their connection
    /// when it ends, as the acknowledgements of a broker that was slow would).
    package func hold() {
        state.withLock { $0.holding = true }
    }

    /// Lets every PUBACK through again, the held ones first.
    package func pass() {
        let connections = state.withLock { state in
            state.holding = false
            return state.connections
        }
        for connection in connections { connection.releaseHeld() }
    }

    /// How many PUBACKs wait in the proxy, over its live connections.
    package var heldCount: Int {
        state.withLock { $0.connections }.reduce(0) { $0 + $1.heldCount }
    }

    /// Stops accepting clients; the connections already made go on until either end
    /// closes.
    package func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private var holding: Bool { state.withLock { $0.holding } }

    private func acceptClients() {
        while true {
            var client: Int32
            repeat { client = accept(listener, nil, nil) } while client < 0 && errno == EINTR
            guard client >= 0 else { return }
            guard let broker = try? connectToLoopback(port: brokerPort) else {
                close(client)
                continue
            }
            let connection = ProxiedConnection(client: client, broker: broker)
            state.withLock { $0.connections.append(connection) }
            let upstream = Thread { [self] in
                connection.forwardToBroker()
                forget(connection)
            }
            upstream.name = "proxy-to-broker"
            upstream.start()
            let downstream = Thread { [self] in
                connection.forwardToClient { [self] in holding }
                forget(connection)
            }
            downstream.name = "proxy-to-client"
            downstream.start()
        }
    }

    private func forget(_ connection: ProxiedConnection) {
        state.withLock { $0.connections.removeAll { $0 === connection } }
    }
}

/// One client's connection through the proxy and its connection to the broker: the
/// client's bytes go to the broker as they come; the broker's are cut into packets, and
/// the PUBACKs among them held while the proxy holds. Both sockets are shut down when
/// either side ends, and closed when both forwarding threads have let go of it.
private final class ProxiedConnection: Sendable {
    let client: Int32
    let broker: Int32
    /// PUBACK packets held back, oldest first; `nil` once the connection ended. Writes to
    /// `client` happen under this lock too.
    private let held = Mutex<[[UInt8]]?>([])

    init(client: Int32, broker: Int32) {
        self.client = client
        self.broker = broker
    }

    deinit {
        close(client)
        close(broker)
    }

    var heldCount: Int { held.withLock { $0?.count ?? 0 } }

    /// Copies what the client sends to the broker until either side ends.
    func forwardToBroker() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = Self.read(client, into: &buffer)
            guard count > 0, Self.write(buffer[0..<count], to: broker) else { break }
        }
        end()
    }

    /// Sends the broker's packets on to the client, each whole, keeping back each PUBACK
    /// while `holding()` says so, until either side ends.
    func forwardToClient(holding: () -> Bool) {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var pending: [UInt8] = []
        reading: while true {
            let count = Self.read(broker, into: &buffer)
            guard count > 0 else { break }
            pending += buffer[0..<count]
            var start = 0
            while let end = MQTTFraming.packetEnd(pending, from: start) {
                let packet = Array(pending[start..<end])
                start = end
                let isAcknowledgement = packet[0] >> 4 == 4
                let hold = isAcknowledgement && holding()
                let sent = held.withLock { held -> Bool in
                    guard held != nil else { return false }
                    if hold {
                        held?.append(packet)
                        return true
                    }
                    return Self.write(packet[...], to: client)
                }
                guard sent else { break reading }
            }
            pending.removeFirst(start)
        }
        end()
    }

    /// Sends the held PUBACKs to the client now.
    func releaseHeld() {
        held.withLock { held in
            guard let packets = held else { return }
            for packet in packets where !Self.write(packet[...], to: client) { break }
            held = []
        }
    }

    /// Ends both sides: the other forwarding thread's read returns.
    private func end() {
        held.withLock { $0 = nil }
        shutdown(client, Int32(SHUT_RDWR))
        shutdown(broker, Int32(SHUT_RDWR))
    }

    private static func read(_ descriptor: Int32, into buffer: inout [UInt8]) -> Int {
        var count: Int
        repeat { count = Glibc.read(descriptor, &buffer, buffer.count) } while count < 0 && errno == EINTR
        return count
    }

    /// Writes all of `bytes`; false when the socket failed.
    private static func write(_ bytes: ArraySlice<UInt8>, to descriptor: Int32) -> Bool {
        bytes.withUnsafeBytes { raw in
            var written = 0
            while written < raw.count {
                let count = send(descriptor, raw.baseAddress! + written, raw.count - written, Int32(MSG_NOSIGNAL))
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                written += count
            }
            return true
        }
    }
}
