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
@Suite("PUBLISH packets larger than the client takes, cut in the read buffer")
struct CutPublishTests {
    typealias Packet = WholePublishTests

    /// Runs `body` with a socket pair whose reader end this thread's buffer has attached,
    /// cutting packets over `limit`; then turns cutting off, detaches and closes.
    private func withCutting(over limit: Int, _ body: (BufferedSocketTests.SocketPair) throws -> Void) throws {
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
        try withCutting(over: 1_000) { pair in
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

    @Test("a packet within the limit, one of another kind and one of QoS 2 come as they are; a QoS 0 one over it is not offered whole but cut")
    func onlyLargePublishesOfQoS0And1() throws {
        try withCutting(over: 100) { pair in
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
        try withCutting(over: 2_000) { pair in
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
