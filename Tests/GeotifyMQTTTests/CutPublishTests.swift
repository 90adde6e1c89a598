import CBufferedSocket
import Foundation
import GeotifyTestSupport
import Testing

/// With a limit set (`geotify_buffered_socket_cut_publishes`), a PUBLISH packet of QoS 0
/// or 1 larger than it reaches libmosquitto cut: its fixed header rewritten to end after
/// the topic and packet id, those as they came, no payload; the payload's bytes are read
/// and dropped as they come, a buffer at a time, so libmosquitto never allocates for
/// them. Every other packet is handed out as it came, a header that runs past the
/// buffer's end included. The tests read the way libmosquitto's `packet__read` does
/// (`WholePublishTests.readPacket`), synchronously: the buffers and the limit belong to
/// the thread that set them.
@Suite("PUBLISH packets larger than the client takes, cut in the read buffer", .timeLimit(.minutes(1)))
struct CutPublishTests {
    typealias Packet = WholePublishTests

    /// Runs `body` with a socket pair whose reader end this thread's buffer has attached,
    /// cutting packets over `limit`; then turns cutting off, detaches and closes.
    static func withCutting(over limit: Int, _ body: (BufferedSocketTests.SocketPair) throws -> Void) throws {
        let pair = try BufferedSocketTests.SocketPair()
        defer {
            geotify_buffered_socket_cut_publishes(0)
            geotify_buffered_socket_detach()
            _ = close(pair.reader)
            _ = close(pair.writer)
        }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        geotify_buffered_socket_cut_publishes(limit)
        try body(pair)
    }

    /// The packet libmosquitto gets for a cut one: the same first byte, the topic and the
    /// packet id (QoS 1), nothing more.
    private func cut(_ topic: String, header: UInt8 = 0x30, packetID: UInt16? = nil) -> [UInt8] {
        Packet.publish(Array(topic.utf8), [], header: header, packetID: packetID)
    }

    @Test("a packet over the limit comes cut, its payload dropped across fills as it arrives, the packets around it whole")
    func cutAcrossFills() throws {
        try Self.withCutting(over: 1_000) { pair in
            let before = Packet.publish(Array("a/1".utf8), Array("small".utf8))
            let payload = [UInt8](repeating: 0x78, count: 200_000)
            let big = Packet.publish(Array("owntracks/big/phone".utf8), payload, header: 0x32, packetID: 9)
            let after = Packet.publish(Array("a/2".utf8), Array("after".utf8), header: 0x32, packetID: 10)
            pair.send(before + big.prefix(30_000))
            #expect(Packet.readPacket(pair.reader) == before)
            #expect(Packet.readPacket(pair.reader) == cut("owntracks/big/phone", header: 0x32, packetID: 9))
            #expect(geotify_buffered_socket_take_cut() == payload.count)
            #expect(geotify_buffered_socket_take_cut() == 0, "said once")
            // The rest of the payload has not come: nothing to read, and nothing pending.
            #expect(Packet.readPacket(pair.reader) == nil)
            #expect(geotify_buffered_socket_pending() == 0)
            let fills = geotify_buffered_socket_fills()
            pair.send(Array(big.dropFirst(30_000)) + after)
            #expect(Packet.readPacket(pair.reader) == after)
            #expect(geotify_buffered_socket_fills() - fills >= 3, "170 000 bytes dropped a buffer of 64 KiB at a time")
            #expect(geotify_buffered_socket_cuts() == 1)
        }
    }

    /// A TLS connection's socket carries ciphertext (`geotify_buffered_socket_attach_tls`):
    /// bytes that happen to read as a PUBLISH over the limit are handed out as they came,
    /// neither cut, nor offered whole, nor gated.
    @Test("the socket of a TLS connection holds ciphertext: nothing in it is cut, offered whole or gated")
    func ciphertextIsNotCut() throws {
        try Self.withCutting(over: 100) { pair in
            #expect(geotify_buffered_socket_attach_tls(nil) == 0)
            let bytes = Packet.publish(Array("a/1".utf8), [UInt8](repeating: 0x78, count: 300))
                + Packet.publish(Array("a/2".utf8), Array("small".utf8))
            pair.send(bytes)
            var view = geotify_publish_view()
            #expect(geotify_buffered_socket_fill() == bytes.count)
            #expect(geotify_buffered_socket_peek_publish(0, &view) == 0)
            geotify_buffered_socket_one_packet(1)
            defer { geotify_buffered_socket_one_packet(0) }
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 7)
            while received.count < bytes.count {
                let count = chunk.withUnsafeMutableBytes { read(pair.reader, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                received += chunk[..<count]
            }
            #expect(received == bytes)
            #expect(geotify_buffered_socket_cuts() == 0)
        }
    }

    @Test("a packet within the limit, one of another kind and one of QoS 2 come as they are; a QoS 0 one over it is not offered whole but cut")
    func onlyLargePublishesOfQoS0And1() throws {
        try Self.withCutting(over: 100) { pair in
            let within = Packet.publish(Array("a".utf8), [UInt8](repeating: 0x61, count: 90))
            let suback: [UInt8] = [0x90, 0x03, 0x00, 0x01, 0x01]
            let qos2 = Packet.publish(Array("q".utf8), [UInt8](repeating: 0x62, count: 300), header: 0x34, packetID: 3)
            let retained = Packet.publish(Array("r/1".utf8), [UInt8](repeating: 0x63, count: 300), header: 0x31)
            pair.send(within + suback + qos2 + retained)
            #expect(Packet.readPacket(pair.reader) == within)
            #expect(Packet.readPacket(pair.reader) == suback)
            #expect(Packet.readPacket(pair.reader) == qos2)
            var view = geotify_publish_view()
            #expect(geotify_buffered_socket_peek_publish(0, &view) == 0, "whole in the buffer, but over the limit")
            #expect(Packet.readPacket(pair.reader) == cut("r/1", header: 0x31))
            #expect(geotify_buffered_socket_take_cut() == 300)
            #expect(geotify_buffered_socket_pending() == 0)
        }
    }

    /// A PUBLISH to topic `f` of exactly `size` bytes (131 or more).
    private func filler(ofSize size: Int) -> [UInt8] {
        precondition(size >= 131)
        for length in 2...3 {
            let packet = Packet.publish(Array("f".utf8), [UInt8](repeating: 0x66, count: size - 4 - length))
            if packet.count == size { return packet }
        }
        preconditionFailure("no filler of \(size) bytes")
    }

    /// A buffer's fill ends inside a header (after its first `inFirstFill` bytes): what
    /// it holds of it is kept aside while the buffer is filled again, then judged whole;
    /// a packet within the limit comes as it was, one over it cut.
    @Test("a header cut off at the buffer's end is judged once the rest has come", arguments: [1, 2, 5], [false, true])
    func headerPastTheBuffersEnd(inFirstFill: Int, large: Bool) throws {
        try Self.withCutting(over: 2_000) { pair in
            // Packets of 1 000 bytes and one of the rest (all within the limit): 64 KiB
            // less the header's start.
            let total = 65_536 - inFirstFill
            let packets = Array(repeating: filler(ofSize: 1_000), count: total / 1_000 - 1) + [filler(ofSize: 1_000 + total % 1_000)]
            #expect(packets.joined().count == total)
            let next = large
                ? Packet.publish(Array("owntracks/b/p".utf8), [UInt8](repeating: 0x62, count: 20_000), header: 0x32, packetID: 4)
                : Packet.publish(Array("owntracks/s/p".utf8), [UInt8](repeating: 0x73, count: 200), header: 0x32, packetID: 2)
            let last = Packet.publish(Array("z".utf8), Array("end".utf8))
            // Two writes, so that the first fill ends where the test says.
            pair.send(Array(packets.joined()) + next.prefix(inFirstFill))
            for packet in packets { #expect(Packet.readPacket(pair.reader) == packet) }
            pair.send(Array(next.dropFirst(inFirstFill)) + last)
            if large {
                #expect(Packet.readPacket(pair.reader) == cut("owntracks/b/p", header: 0x32, packetID: 4))
                #expect(geotify_buffered_socket_take_cut() == 20_000)
            } else {
                #expect(Packet.readPacket(pair.reader) == next)
                #expect(geotify_buffered_socket_cuts() == 0)
            }
            #expect(Packet.readPacket(pair.reader) == last)
        }
    }
}

/// Random streams of packets through the read buffer with cutting on, in random pieces,
/// read the way libmosquitto reads (its state kept across calls that find nothing) and,
/// at packet starts, taken whole now and then as the network loop does: every packet comes
/// once, in order, as it was, but for each PUBLISH of QoS 0 or 1 over the limit, which
/// comes cut with its payload's size said once.
@Suite("The read buffer's cut under random streams", .timeLimit(.minutes(1)))
struct CutPublishStreamTests {
    typealias Packet = WholePublishTests

    /// A reader with libmosquitto's `packet__read` state: the command, the remaining
    /// length's bytes, then the body, each read as far as bytes are at hand.
    struct LibmosquittoReader {
        let descriptor: Int32
        private var packet: [UInt8] = []
        private var remaining: Int?
        private var shift = 0
        private var length = 0
        private var scratch: [UInt8] = []

        init(_ descriptor: Int32) { self.descriptor = descriptor }

        /// Whether no packet is under way.
        var atPacketStart: Bool { packet.isEmpty }

        /// Reads until nothing is at hand or a packet is complete; returns the packet
        /// completed, if one was, with what `geotify_buffered_socket_take_cut` said right
        /// after it (as the callback asks).
        mutating func readOne() -> [(packet: [UInt8], cut: Int)] {
            var done: [(packet: [UInt8], cut: Int)] = []
            while done.isEmpty {
                if packet.isEmpty || remaining == nil {
                    var byte: UInt8 = 0
                    guard read(descriptor, &byte, 1) == 1 else { return done }
                    packet.append(byte)
                    if packet.count > 1 {
                        length |= Int(byte & 127) << shift
                        shift += 7
                        if byte & 128 == 0 { remaining = length }
                    }
                } else if let left = remaining, left > 0 {
                    // Asked for all that is left, as libmosquitto asks (past 64 KiB the
                    // buffer reads straight into the caller's memory).
                    if scratch.count < left { scratch = [UInt8](repeating: 0, count: left) }
                    let count = scratch.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, left) }
                    guard count > 0 else { return done }
                    packet += scratch[..<count]
                    remaining = left - count
                }
                if remaining == 0 {
                    done.append((packet, Int(geotify_buffered_socket_take_cut())))
                    packet = []
                    remaining = nil
                    shift = 0
                    length = 0
                }
            }
            return done
        }
    }

    /// SplitMix64: the same streams on every run.
    struct Random {
        var state: UInt64
        mutating func next(_ upTo: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(upTo))
        }
    }

    @Test("every packet once, in order, cut exactly when over the limit", arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func randomStreams(seed: UInt64) throws {
        let limit = 2_000
        var random = Random(state: seed)
        var packets: [[UInt8]] = []
        var expected: [(packet: [UInt8], cut: Int)] = []
        for number in 0..<150 {
            let topic = Array("t/\(number)/".utf8) + [UInt8](repeating: 0x61, count: random.next(40))
            let sizes = [random.next(200), random.next(3_000), 1_900 + random.next(200), random.next(150_000)]
            let payload = [UInt8](repeating: UInt8(truncatingIfNeeded: number), count: sizes[random.next(sizes.count)])
            let qos = random.next(3)
            let packetID = UInt16(1 + random.next(65_000))
            switch random.next(5) {
            case 0:
                let puback: [UInt8] = [0x40, 0x02, UInt8(packetID >> 8), UInt8(packetID & 0xFF)]
                packets.append(puback)
                expected.append((puback, 0))
            default:
                let header = UInt8(0x30 | (qos << 1) | random.next(2))
                let packet = Packet.publish(topic, payload, header: header, packetID: qos > 0 ? packetID : nil)
                packets.append(packet)
                if packet.count > limit && qos < 2 {
                    expected.append((Packet.publish(topic, [], header: header, packetID: qos > 0 ? packetID : nil), payload.count))
                } else {
                    expected.append((packet, 0))
                }
            }
        }
        // Appended whole: `joined()` goes byte by byte through a generic iterator.
        let stream = packets.reduce(into: [UInt8]()) { $0 += $1 }
        try CutPublishTests.withCutting(over: limit) { pair in
            var reader = LibmosquittoReader(pair.reader)
            var received: [(packet: [UInt8], cut: Int)] = []
            var takenWhole = 0
            var sent = 0
            // Sent without waiting, so that a reader that stops reading ends the test instead of
            // blocking it: it ends after rounds in which nothing was sent or received.
            _ = fcntl(pair.writer, F_SETFL, fcntl(pair.writer, F_GETFL) | O_NONBLOCK)
            var idle = 0
            while received.count < expected.count && idle < 100 {
                let before = (sent, received.count)
                if sent < stream.count {
                    let piece = min(stream.count - sent, 1 + random.next([7, 300, 5_000, 70_000][random.next(4)]))
                    let written = stream[sent..<sent + piece].withUnsafeBytes { write(pair.writer, $0.baseAddress, $0.count) }
                    if written > 0 { sent += written }
                }
                // As the network loop: at a packet's start, now and then, the QoS 0 packets the
                // buffer offers whole; then one packet of libmosquitto's, until nothing is at hand.
                while true {
                    if reader.atPacketStart && random.next(4) > 0 {
                        var view = geotify_publish_view()
                        while geotify_buffered_socket_pending() > 0 || geotify_buffered_socket_fill() > 0,
                              geotify_buffered_socket_peek_publish(0, &view) != 0 {
                            let topic = Array(UnsafeBufferPointer(start: view.topic, count: view.topic_length))
                            let payload = Array(UnsafeBufferPointer(start: view.payload, count: view.payload_length))
                            received.append((Packet.publish(topic, payload, header: view.retain != 0 ? 0x31 : 0x30), 0))
                            geotify_buffered_socket_take_publish(&view)
                            takenWhole += 1
                        }
                    }
                    let one = reader.readOne()
                    guard !one.isEmpty else { break }
                    received += one
                }
                idle = before == (sent, received.count) ? idle + 1 : 0
            }
            #expect(received.count == expected.count)
            for (index, (got, want)) in zip(received, expected).enumerated() where got.packet != want.packet || got.cut != want.cut {
                Issue.record("packet \(index): got \(got.packet.prefix(12)) (\(got.packet.count) bytes, cut \(got.cut)), expected \(want.packet.prefix(12)) (\(want.packet.count) bytes, cut \(want.cut))")
                break
            }
            #expect(Int(geotify_buffered_socket_cuts()) == expected.filter { $0.cut > 0 }.count)
            #expect(expected.contains { $0.cut > 0 }, "the stream has packets to cut")
            #expect(takenWhole > 0 || !expected.contains { $0.packet.first == 0x30 && $0.packet.count <= limit }, "QoS 0 packets taken whole")
        }
    }
}
