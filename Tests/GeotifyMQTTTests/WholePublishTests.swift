import CBufferedSocket
import Foundation
import GeotifyTestSupport
import Testing

/// The read buffer follows the stream's MQTT packet framing from the connection's first
/// byte, through libmosquitto's reads and the packets taken whole alike, and offers a
/// QoS 0 PUBLISH it holds whole (`geotify_buffered_socket_peek_publish`) only at a
/// packet's start; every other packet, and any it cannot judge, is left to libmosquitto.
/// The tests read the way libmosquitto's `packet__read` does: the command byte, each
/// byte of the remaining length, then the rest.
@Suite("QoS 0 PUBLISH packets read whole out of the read buffer")
struct WholePublishTests {
    typealias SocketPair = BufferedSocketTests.SocketPair

    /// A PUBLISH packet: `header` (0x30 | flags), the topic, for QoS 1 and 2 a packet id,
    /// for MQTT 5 `properties` (their bytes, after their length), the payload.
    static func publish(
        _ topic: [UInt8], _ payload: [UInt8], header: UInt8 = 0x30, packetID: UInt16? = nil, properties: [UInt8]? = nil
    ) -> [UInt8] {
        var body = [UInt8(topic.count >> 8), UInt8(topic.count & 0xFF)] + topic
        if let packetID { body += [UInt8(packetID >> 8), UInt8(packetID & 0xFF)] }
        if let properties { body += variableInteger(properties.count) + properties }
        body += payload
        return [header] + variableInteger(body.count) + body
    }

    static func variableInteger(_ value: Int) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(value % 128)
            value /= 128
            if value > 0 { byte |= 128 }
            bytes.append(byte)
        } while value > 0
        return bytes
    }

    /// Reads one packet through the process's `read` as libmosquitto does; nil when the
    /// socket ran dry first.
    static func readPacket(_ descriptor: Int32) -> [UInt8]? {
        func next(_ count: Int) -> [UInt8]? {
            var bytes: [UInt8] = []
            while bytes.count < count {
                var buffer = [UInt8](repeating: 0, count: count - bytes.count)
                let result = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                guard result > 0 else { return nil }
                bytes += buffer.prefix(result)
            }
            return bytes
        }
        guard var packet = next(1) else { return nil }
        var length = 0
        var shift = 0
        while true {
            guard let byte = next(1)?.first else { return nil }
            packet.append(byte)
            length |= Int(byte & 127) << shift
            shift += 7
            if byte & 128 == 0 { break }
        }
        guard let body = length > 0 ? next(length) : [] else { return nil }
        return packet + body
    }

    /// Whether the buffer offers a packet now (its view is not looked at: for a packet it
    /// must not offer, the view's lengths may be anything).
    private func offered(properties: Bool = false) -> Bool {
        var view = geotify_publish_view()
        return geotify_buffered_socket_peek_publish(properties ? 1 : 0, &view) != 0
    }

    /// The packet the buffer offers now, taken: its topic, payload and RETAIN flag.
    private func take(properties: Bool = false) -> (topic: String, payload: [UInt8], retain: Bool)? {
        var view = geotify_publish_view()
        guard geotify_buffered_socket_peek_publish(properties ? 1 : 0, &view) != 0 else { return nil }
        let topic = String(decoding: UnsafeBufferPointer(start: view.topic, count: view.topic_length), as: UTF8.self)
        let payload = Array(UnsafeBufferPointer(start: view.payload, count: view.payload_length))
        geotify_buffered_socket_take_publish(&view)
        return (topic, payload, view.retain != 0)
    }

    /// Runs `body` with a socket pair whose reader end this thread's buffer has attached,
    /// then detaches it and closes both ends.
    private func withAttachedPair(_ body: (SocketPair) throws -> Void) throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader); _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        try body(pair)
    }

    private let connack: [UInt8] = [0x20, 0x02, 0x00, 0x00]

    @Test("QoS 0 packets are offered whole, in order, between the packets libmosquitto reads")
    func offeredBetweenOthers() throws {
        try withAttachedPair { pair in
            let first = Self.publish(Array("owntracks/a/p".utf8), Array("{\"n\":1}".utf8))
            let retained = Self.publish(Array("owntracks/b/p".utf8), Array("{\"n\":2}".utf8), header: 0x31)
            let qos1 = Self.publish(Array("owntracks/c/p".utf8), Array("{\"n\":3}".utf8), header: 0x32, packetID: 7)
            let empty = Self.publish(Array("t".utf8), [])
            // A remaining length of three bytes (16 384 or more).
            let long = Self.publish(Array("owntracks/e/p".utf8), [UInt8](repeating: 0x7B, count: 20_000))
            let last = Self.publish(Array("owntracks/d/p".utf8), Array("{\"n\":4}".utf8))
            pair.send(connack + first + retained + qos1 + empty + long + last)

            #expect(take() == nil, "nothing is offered before the buffer holds anything")
            #expect(Self.readPacket(pair.reader) == connack)
            #expect(take().map { [$0.topic] } == ["owntracks/a/p"])
            let second = take()
            #expect(second?.topic == "owntracks/b/p" && second?.payload == Array("{\"n\":2}".utf8) && second?.retain == true)
            #expect(take() == nil, "a QoS 1 PUBLISH is libmosquitto's: it acknowledges it")
            #expect(Self.readPacket(pair.reader) == qos1)
            let blank = take()
            #expect(blank?.topic == "t" && blank?.payload == [] && blank?.retain == false)
            #expect(take()?.payload == [UInt8](repeating: 0x7B, count: 20_000))
            #expect(take()?.payload == Array("{\"n\":4}".utf8))
            #expect(take() == nil)
            #expect(geotify_buffered_socket_pending() == 0)
        }
    }

    @Test("filling the empty buffer lets the first packet of a burst be offered; a buffer holding bytes is left alone")
    func fillForTheFirst() throws {
        try withAttachedPair { pair in
            errno = 0
            #expect(geotify_buffered_socket_fill() == -1 && errno == EAGAIN, "nothing at hand")
            #expect(geotify_buffered_socket_drained() != 0)
            pair.send(connack)
            #expect(Self.readPacket(pair.reader) == connack)
            let first = Self.publish(Array("first".utf8), Array("1".utf8))
            let second = Self.publish(Array("second".utf8), Array("2".utf8))
            pair.send(first + second)
            #expect(take() == nil, "the buffer is empty until filled")
            #expect(geotify_buffered_socket_fill() == first.count + second.count)
            #expect(geotify_buffered_socket_fills() == 2)
            #expect(take()?.topic == "first")
            pair.send(first)
            #expect(geotify_buffered_socket_fill() == second.count, "bytes are buffered: no read")
            #expect(geotify_buffered_socket_fills() == 2)
            #expect(take()?.topic == "second")
            geotify_buffered_socket_detach()
            #expect(geotify_buffered_socket_fill() == -1 && errno == EBADF, "nothing attached")
        }
    }

    @Test("a connection reset met by the fill is kept for libmosquitto's next read, which returns it")
    func fillKeepsTheFailure() throws {
        let (listener, port) = try listenOnLoopback()
        defer { close(listener) }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        let server = accept(listener, nil, nil)
        #expect(server >= 0)
        defer { geotify_buffered_socket_detach(); _ = close(client) }
        _ = fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK)
        #expect(geotify_buffered_socket_attach(client) == 0)
        // Closed with a linger of 0: the server's end sends RST.
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(server, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(server)
        var ready = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
        #expect(poll(&ready, 1, 10_000) == 1, "the reset arrives")

        errno = 0
        #expect(geotify_buffered_socket_fill() == -1 && errno == ECONNRESET)
        var byte: UInt8 = 0
        errno = 0
        #expect(read(client, &byte, 1) == -1 && errno == ECONNRESET, "libmosquitto's read hears of it")
        #expect(read(client, &byte, 1) == 0, "then the end of the stream, as the kernel says")
    }

    @Test("nothing is offered while libmosquitto is inside a packet, even if its rest looks like a PUBLISH")
    func notInsideAPacket() throws {
        try withAttachedPair { pair in
            // A QoS 1 PUBLISH whose payload is itself a whole QoS 0 PUBLISH.
            let inner = Self.publish(Array("x".utf8), Array("y".utf8))
            let outer = Self.publish(Array("o".utf8), inner, header: 0x32, packetID: 1)
            pair.send(outer + inner)
            var header = [UInt8](repeating: 0, count: 2 + 2 + 1 + 2)
            // The command byte, the length byte, then part of the body: libmosquitto stopped there.
            for index in header.indices {
                #expect(header.withUnsafeMutableBytes { read(pair.reader, $0.baseAddress! + index, 1) } == 1)
            }
            #expect(take() == nil, "inside the body of a packet")
            var rest = [UInt8](repeating: 0, count: outer.count - header.count)
            #expect(rest.withUnsafeMutableBytes { read(pair.reader, $0.baseAddress, $0.count) } == rest.count)
            #expect(take()?.topic == "x", "at the next packet's start")
        }
    }

    @Test("a packet cut off at the buffer's end is left to libmosquitto, and the ones after it are offered again")
    func cutOffAndAfter() throws {
        try withAttachedPair { pair in
            let whole = Self.publish(Array("a".utf8), Array("1".utf8))
            let cut = Self.publish(Array("b".utf8), Array("22".utf8))
            pair.send(connack + whole + cut.dropLast())
            #expect(Self.readPacket(pair.reader) == connack)
            #expect(take()?.topic == "a")
            #expect(!offered(), "\(cut.count - 1) of its \(cut.count) bytes are here")
            pair.send([cut[cut.count - 1]] + whole)
            // Its body in two reads, the second of one byte, after the refill.
            #expect(Self.readPacket(pair.reader) == cut, "libmosquitto reads it across the refill")
            #expect(take()?.topic == "a", "the framing ends the body where its length says")
        }
    }

    @Test("a body larger than the buffer, read straight into libmosquitto's memory, keeps the framing")
    func largeBodyKeepsFraming() throws {
        try withAttachedPair { pair in
            let large = Self.publish(Array("big".utf8), [UInt8](repeating: 0x41, count: 70_000))
            let lengthBytes = Self.variableInteger(large.count - 1 - 3).count
            #expect(lengthBytes == 3)
            // The fixed header alone first, so that the body's read finds the buffer empty.
            pair.send(Array(large.prefix(1 + lengthBytes)))
            var header = [UInt8](repeating: 0, count: 1 + lengthBytes)
            for index in header.indices {
                #expect(header.withUnsafeMutableBytes { read(pair.reader, $0.baseAddress! + index, 1) } == 1)
            }
            pair.send(Array(large.dropFirst(1 + lengthBytes)))
            var body = [UInt8](repeating: 0, count: large.count - header.count)
            #expect(body.withUnsafeMutableBytes { read(pair.reader, $0.baseAddress, $0.count) } == body.count)
            #expect(geotify_buffered_socket_fills() == 1, "the body went past the buffer")
            #expect(header + body == large)
            let small = Self.publish(Array("small".utf8), Array("s".utf8))
            let after = Self.publish(Array("after".utf8), Array("a".utf8))
            pair.send(small + after)
            #expect(Self.readPacket(pair.reader) == small)
            #expect(take()?.topic == "after")
        }
    }

    @Test("what libmosquitto judges is not offered: other flags, no topic, a topic past the packet, MQTT 5 properties")
    func leftToLibmosquitto() throws {
        let topic = Array("t".utf8)
        let refused: [(String, [UInt8], Bool)] = [
            ("QoS 2", Self.publish(topic, [1], header: 0x34, packetID: 1), false),
            ("QoS 3", Self.publish(topic, [1], header: 0x36), false),
            ("DUP on QoS 0", Self.publish(topic, [1], header: 0x38), false),
            ("a SUBACK", [0x90, 0x03, 0x00, 0x01, 0x00], false),
            ("an empty topic (MQTT 5: an alias)", Self.publish([], [1]), false),
            ("a topic one byte past the packet", [0x30, 0x03, 0x00, 0x02, 0x41], false),
            ("a body too short for the topic's length", [0x30, 0x01, 0x00] + Self.publish(topic, [1]), false),
            // Its value, 3, would fit what follows.
            ("a remaining length of five bytes", [0x30, 0x83, 0x80, 0x80, 0x80, 0x00, 0x00, 0x01, 0x41], false),
            ("MQTT 5 with a property", Self.publish(topic, [1], properties: [0x01, 0x01]), true),
            ("MQTT 5 without the properties' length", [0x30, 0x03, 0x00, 0x01, 0x41], true),
        ]
        for (name, packet, properties) in refused {
            try withAttachedPair { pair in
                pair.send(connack + packet)
                #expect(Self.readPacket(pair.reader) == connack)
                #expect(!offered(properties: properties), "\(name)")
            }
        }
        // Without any property MQTT 5's packet is offered, its payload after the length byte.
        try withAttachedPair { pair in
            pair.send(connack + Self.publish(topic, [7, 8], properties: []))
            #expect(Self.readPacket(pair.reader) == connack)
            #expect(take(properties: true)?.payload == [7, 8])
        }
    }

    @Test("held to one packet, libmosquitto's reads stop at the next packet's start with EAGAIN, and the rest is offered whole")
    func onePacketALibmosquittoRead() throws {
        try withAttachedPair { pair in
            let qos1 = Self.publish(Array("owntracks/c/p".utf8), Array("{\"n\":1}".utf8), header: 0x32, packetID: 7)
            let puback: [UInt8] = [0x40, 0x02, 0x00, 0x07]
            let positions = (0..<3).map { Self.publish(Array("owntracks/a/p".utf8), Array("{\"n\":\($0)}".utf8)) }
            pair.send(connack + qos1 + puback + positions.joined())
            #expect(Self.readPacket(pair.reader) == connack)

            // libmosquitto reads as many packets a call as the client has QoS 1 messages queued.
            geotify_buffered_socket_one_packet(1)
            #expect(Self.readPacket(pair.reader) == qos1, "the packet it was called for is read whole")
            var byte: UInt8 = 0
            errno = 0
            #expect(read(pair.reader, &byte, 1) == -1 && errno == EAGAIN, "the next packet waits, though buffered")
            #expect(geotify_buffered_socket_pending() == puback.count + positions.joined().count)
            geotify_buffered_socket_one_packet(0)
            #expect(take() == nil, "a PUBACK is libmosquitto's")
            geotify_buffered_socket_one_packet(1)
            #expect(Self.readPacket(pair.reader) == puback)
            #expect(read(pair.reader, &byte, 1) == -1 && errno == EAGAIN)
            geotify_buffered_socket_one_packet(0)
            #expect(take()?.payload == Array("{\"n\":0}".utf8), "the positions are offered whole")

            // Turned on inside a packet (its first byte read before), the packet is read to its end.
            #expect(read(pair.reader, &byte, 1) == 1)
            geotify_buffered_socket_one_packet(1)
            let rest = Array(positions[1].dropFirst())
            var buffer = [UInt8](repeating: 0, count: rest.count)
            #expect(buffer.withUnsafeMutableBytes { read(pair.reader, $0.baseAddress, $0.count) } == rest.count)
            #expect(buffer == rest)
            #expect(read(pair.reader, &byte, 1) == -1 && errno == EAGAIN)
            geotify_buffered_socket_one_packet(0)
            #expect(take()?.payload == Array("{\"n\":2}".utf8))
            #expect(geotify_buffered_socket_pending() == 0)
        }
    }

    @Test("a packet without a body (PINGRESP) ends at its length byte: the gate stops after it, and the PUBLISH after it is offered")
    func aPacketWithoutABody() throws {
        try withAttachedPair { pair in
            let pingresp: [UInt8] = [0xD0, 0x00]
            let position = Self.publish(Array("owntracks/a/p".utf8), Array("{}".utf8))
            pair.send(connack + pingresp + position)
            #expect(Self.readPacket(pair.reader) == connack)
            geotify_buffered_socket_one_packet(1)
            #expect(Self.readPacket(pair.reader) == pingresp)
            var byte: UInt8 = 0
            errno = 0
            #expect(read(pair.reader, &byte, 1) == -1 && errno == EAGAIN, "the next packet waits")
            geotify_buffered_socket_one_packet(0)
            #expect(take()?.topic == "owntracks/a/p")
        }
    }

    @Test("a remaining length longer than four bytes ends the offers, and the one-packet gate, for the connection")
    func malformedLengthLosesTheFraming() throws {
        try withAttachedPair { pair in
            let whole = Self.publish(Array("a".utf8), Array("1".utf8))
            // A fifth length byte that would end the length (at 0): libmosquitto refuses the
            // packet at the fourth, and so does the framing.
            pair.send([0x30, 0x80, 0x80, 0x80, 0x80, 0x00] + whole)
            geotify_buffered_socket_one_packet(1)
            var byte: UInt8 = 0
            for _ in 0..<6 { #expect(read(pair.reader, &byte, 1) == 1) }
            #expect(!offered(), "no packet's start is known any more")
            for _ in whole.indices { #expect(read(pair.reader, &byte, 1) == 1, "nor an end for the gate to stop at") }
            geotify_buffered_socket_one_packet(0)
        }
    }
}
