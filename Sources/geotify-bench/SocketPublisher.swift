import Foundation
import Synchronization

/// An MQTT 3.1.1 client that only publishes at QoS 0, over a TCP socket whose maximum
/// segment size the bench chooses before it connects: the latency run's publisher.
///
/// Why not `MQTTClient`: the thirty-second session caught the 200 ms stall of the
/// latency run in a capture, the `MQTTClient` publisher's flow stopping first: the broker
/// had opened a window of 60 416 bytes, less than the 64 000-byte segment the
/// publisher's kernel held, the broker sent no update until it could open a whole
/// segment more (silly-window avoidance at both ends) and Linux's persist timer ended it
/// after 200 ms. Through this client, which writes each packet as it is published
/// rather than gathered on a network thread, no run stalled, with 1 448-byte segments or
/// with loopback's (0 of 52 at 60 000 positions a second, against 4 of 32 for the
/// `MQTTClient`: BENCHMARKS.md). `segmentSize` is 1 448 by default in the bench, a phone's
/// link; nil keeps loopback's own. libmosquitto opens its socket itself and has no option
/// for either.
///
/// The broker sends nothing back to a client that publishes at QoS 0 and asks for no
/// keep-alive, so nothing is read after the CONNACK. `Sendable`: a lock keeps one
/// packet's bytes together when threads share a client.
final class SocketPublisher: Sendable {
    private let descriptor: Int32
    private let writing = Mutex(())

    /// Connects to the broker on 127.0.0.1:`port` as `clientID` and waits (10 s at most)
    /// for its CONNACK.
    init(port: Int, clientID: String, segmentSize: Int?) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw BenchError("socket() failed: \(String(cString: strerror(errno)))") }
        self.descriptor = descriptor
        do {
            if let segmentSize { try setOption(Int32(IPPROTO_TCP), TCP_MAXSEG, Int32(segmentSize), "TCP_MAXSEG") }
            try setOption(Int32(IPPROTO_TCP), TCP_NODELAY, 1, "TCP_NODELAY")
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            guard setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size)) == 0 else {
                throw BenchError("SO_RCVTIMEO: \(String(cString: strerror(errno)))")
            }
            var address = LocalPort.loopback(port: port)
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw BenchError("connect(127.0.0.1:\(port)) failed: \(String(cString: strerror(errno)))") }
            try send(SocketPublisher.connectPacket(clientID: clientID))
            var connack = [UInt8](repeating: 0, count: 4)
            var received = 0
            while received < connack.count {
                let count = connack.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + received, 4 - received) }
                guard count > 0 else { throw BenchError("the broker on 127.0.0.1:\(port) sent no CONNACK") }
                received += count
            }
            guard connack == [0x20, 0x02, 0x00, 0x00] else {
                throw BenchError("the broker on 127.0.0.1:\(port) refused the publisher: CONNACK \(connack)")
            }
        } catch {
            close(descriptor)
            throw error
        }
    }

    /// The segment size the kernel uses for this connection (`TCP_MAXSEG` once connected).
    var segmentSize: Int {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(descriptor, Int32(IPPROTO_TCP), TCP_MAXSEG, &value, &length) == 0 ? Int(value) : 0
    }

    /// Sends one PUBLISH packet at QoS 0, not retained.
    func publish(topic: String, payload: [UInt8]) throws {
        var packet: [UInt8] = [0x30]
        let topicBytes = Array(topic.utf8)
        SocketPublisher.appendLength(2 + topicBytes.count + payload.count, to: &packet)
        packet.append(UInt8(topicBytes.count >> 8))
        packet.append(UInt8(topicBytes.count & 0xFF))
        packet.append(contentsOf: topicBytes)
        packet.append(contentsOf: payload)
        try send(packet)
    }

    /// Sends DISCONNECT and closes the socket.
    func stop() {
        try? send([0xE0, 0x00])
        close(descriptor)
    }

    /// CONNECT, MQTT 3.1.1, clean session, no keep-alive.
    static func connectPacket(clientID: String) -> [UInt8] {
        let identifier = Array(clientID.utf8)
        let body: [UInt8] = [0x00, 0x04] + Array("MQTT".utf8) + [0x04, 0x02, 0x00, 0x00]
            + [UInt8(identifier.count >> 8), UInt8(identifier.count & 0xFF)] + identifier
        var packet: [UInt8] = [0x10]
        appendLength(body.count, to: &packet)
        return packet + body
    }

    /// MQTT's remaining length: seven bits a byte, the high bit set while more follow.
    static func appendLength(_ length: Int, to bytes: inout [UInt8]) {
        var rest = length
        repeat {
            var byte = UInt8(rest & 0x7F)
            rest >>= 7
            if rest > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while rest > 0
    }

    private func setOption(_ level: Int32, _ name: Int32, _ value: Int32, _ label: String) throws {
        var value = value
        guard setsockopt(descriptor, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw BenchError("\(label): \(String(cString: strerror(errno)))")
        }
    }

    /// Sends all of `bytes` (blocking: a broker that reads slowly holds the publisher
    /// back, as it would a phone).
    private func send(_ bytes: [UInt8]) throws {
        try writing.withLock { _ in
            try bytes.withUnsafeBytes { buffer in
                var sent = 0
                while sent < buffer.count {
                    // send(2) with MSG_NOSIGNAL: a broker gone must be an error, not SIGPIPE.
                    let count = Glibc.send(descriptor, buffer.baseAddress! + sent, buffer.count - sent, Int32(MSG_NOSIGNAL))
                    if count < 0 && errno == EINTR { continue }
                    guard count > 0 else { throw BenchError("writing to the broker failed: \(String(cString: strerror(errno)))") }
                    sent += count
                }
            }
        }
    }
}
