import Foundation
import Synchronization

/// A broker that lets one client connect (it answers the CONNECT with a CONNACK) and then
/// reads everything the client sends without ever answering: no SUBACK, no PUBACK, no
/// PINGRESP. It keeps the bytes, so a test can tell which packets the client sent and
/// whether it left with a DISCONNECT or only closed the connection, which to a real
/// broker is the difference between dropping the client's will and publishing it.
/// (`TestBroker.pause()` cannot show that: a stopped mosquitto reads nothing either.)
package final class SilentBroker: Sendable {
    package let port: Int
    private let listener: Int32
    /// What the client sent, and whether its connection has ended.
    private let received = Mutex<(bytes: [UInt8], closed: Bool)>(([], false))
    /// Whether the broker holds off reading (`holdReading()`).
    private let holding = Mutex(false)

    /// Listens on 127.0.0.1, on a port the kernel picks, for one client. With
    /// `receiveBuffer`, the kernel keeps about that many bytes at most that the broker has
    /// not read (SO_RCVBUF), so that while the broker holds off reading, the client's
    /// socket is soon full and stays so.
    package init(receiveBuffer: Int32? = nil) throws {
        (listener, port) = try listenOnLoopback()
        if var size = receiveBuffer {
            // The connection accepted inherits it.
            _ = setsockopt(listener, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        let thread = Thread { [self] in serve() }
        thread.name = "silent-broker"
        thread.start()
    }

    deinit {
        close(listener)
    }

    /// Stops listening; a wait for a client that never came ends (the serving thread
    /// holds this broker until then).
    package func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
    }

    /// Reads nothing more, once a read under way has returned, until `resumeReading()`
    /// (or a minute has passed), as a broker that hangs: what the client writes meanwhile
    /// waits in the kernel's buffers, then in the client's.
    package func holdReading() {
        holding.withLock { $0 = true }
    }

    /// Reads again what the client sent and sends.
    package func resumeReading() {
        holding.withLock { $0 = false }
    }

    /// The type of each whole packet the client sent, in order (1 CONNECT, 3 PUBLISH,
    /// 8 SUBSCRIBE, 12 PINGREQ, 14 DISCONNECT, ...).
    package var packetTypes: [UInt8] {
        packetHeaders.map { $0 >> 4 }
    }

    /// The first byte of each whole packet the client sent, in order: the type in the
    /// high four bits, the flags in the low four (0x30 a PUBLISH at QoS 0, 0x32 one at
    /// QoS 1).
    package var packetHeaders: [UInt8] {
        let bytes = received.withLock { $0.bytes }
        var headers: [UInt8] = []
        var index = 0
        while index < bytes.count, let end = MQTTFraming.packetEnd(bytes, from: index) {
            headers.append(bytes[index])
            index = end
        }
        return headers
    }

    /// Whether the client's connection has ended (it closed or shut it down).
    package var isClosed: Bool { received.withLock { $0.closed } }

    /// Accepts one client, answers its CONNECT, then only reads until the connection ends.
    private func serve() {
        var connection: Int32
        repeat { connection = accept(listener, nil, nil) } while connection < 0 && errno == EINTR
        guard connection >= 0 else {
            received.withLock { $0.closed = true }
            return
        }
        defer {
            close(connection)
            received.withLock { $0.closed = true }
        }
        var answered = false
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            if holding.withLock({ $0 }) {
                waitUntil(timeout: 60) { !holding.withLock { $0 } }
            }
            var count: Int
            repeat { count = read(connection, &buffer, buffer.count) } while count < 0 && errno == EINTR
            guard count > 0 else { return }
            let bytes = received.withLock { received -> [UInt8] in
                received.bytes += buffer[0..<count]
                return received.bytes
            }
            if !answered, let level = Self.protocolLevel(ofConnect: bytes) {
                // CONNACK: session not present, accepted; MQTT 5 adds an empty property list.
                let connack: [UInt8] = level == 5 ? [0x20, 0x03, 0x00, 0x00, 0x00] : [0x20, 0x02, 0x00, 0x00]
                guard write(connection, connack, connack.count) == connack.count else { return }
                answered = true
            }
        }
    }

    /// The protocol level of the CONNECT at the start of `bytes` (4 for 3.1.1, 5 for 5),
    /// nil until enough of it has come.
    private static func protocolLevel(ofConnect bytes: [UInt8]) -> UInt8? {
        guard let (_, header) = MQTTFraming.remainingLength(bytes, at: 1) else { return nil }
        // After the fixed header: the protocol name ("MQTT", with its two-byte length), then the level.
        let level = 1 + header + 2 + 4
        return level < bytes.count ? bytes[level] : nil
    }
}
