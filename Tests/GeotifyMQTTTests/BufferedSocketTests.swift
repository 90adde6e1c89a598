import CBufferedSocket
import Foundation
import GeotifyTestSupport
import Synchronization
import Testing

/// The process's `read`, `write` and `close` (CBufferedSocket) serve a thread's attached
/// socket from a buffer one system call fills and gather its writes for one system call,
/// with the semantics libmosquitto relies on: bytes in order, short reads, EAGAIN when
/// nothing is at hand or the kernel takes no more, 0 at the end of the stream; every
/// other descriptor, and every other thread, reads and writes the kernel's way. The tests
/// are synchronous: the buffers belong to the thread that attached them.
@Suite("Buffered reads and writes of the MQTT socket")
struct BufferedSocketTests {
    /// A connected pair of non-blocking stream sockets; `reader` is the end under test.
    struct SocketPair {
        let reader: Int32
        let writer: Int32

        init() throws {
            var ends: [Int32] = [-1, -1]
            // Close-on-exec from the start: a child another test spawns meanwhile (a broker,
            // the geotify binary) would otherwise keep the writer open, and the reader
            // would never see the end of the stream.
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &ends) == 0 else {
                throw POSIXError(.init(rawValue: errno) ?? .EIO)
            }
            reader = ends[0]
            writer = ends[1]
            _ = fcntl(reader, F_SETFL, fcntl(reader, F_GETFL) | O_NONBLOCK)
        }

        /// Closes the writer and waits (up to 10 s) until the reader's end sees it closed.
        /// Not at once: a child another test spawns holds a copy of every descriptor from
        /// its fork to its exec, close-on-exec or not, and the connection stays open
        /// until the last copy closes (a read then gave EAGAIN instead of the end, once
        /// in 14 runs of the suite with both cores busy). `poll` is the kernel's, so
        /// nothing is read meanwhile through the buffer under test.
        func closeWriterAndWaitForHangUp() -> Bool {
            _ = close(writer)
            return waitUntil {
                var hangUp = pollfd(fd: reader, events: Int16(POLLIN), revents: 0)
                return poll(&hangUp, 1, 0) == 1 && hangUp.revents & Int16(POLLHUP) != 0
            }
        }

        func send(_ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
                precondition(written > 0, "the test's socket pair took no bytes")
                offset += written
            }
        }
    }

    /// Reads up to `count` bytes from `descriptor` through the process's `read`.
    private func readBytes(_ descriptor: Int32, _ count: Int) -> (result: Int, bytes: [UInt8], errno: Int32) {
        var buffer = [UInt8](repeating: 0, count: count)
        errno = 0
        let result = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, count) }
        return (result, Array(buffer.prefix(max(result, 0))), errno)
    }

    @Test("packets waiting in the socket are read with one system call, in order, in pieces of any size")
    func onceForWaitingBytes() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader); _ = close(pair.writer) }
        let sent = (0..<3_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        pair.send(sent)
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)

        var received: [UInt8] = []
        var sizes = [1, 1, 2, 5, 100, 1]
        while received.count < sent.count {
            let size = sizes.isEmpty ? 333 : sizes.removeFirst()
            let (result, bytes, _) = readBytes(pair.reader, size)
            #expect(result > 0 && result <= size)
            received += bytes
        }
        #expect(received == sent)
        #expect(geotify_buffered_socket_fills() == 1, "3 000 waiting bytes read in pieces took one fill")
        #expect(geotify_buffered_socket_pending() == 0)

        #expect(geotify_buffered_socket_drained() == 0, "the socket was not found empty yet")
        let empty = readBytes(pair.reader, 10)
        #expect(empty.result == -1 && empty.errno == EAGAIN, "nothing at hand: EAGAIN, as the kernel says")
        #expect(geotify_buffered_socket_drained() != 0)
        pair.send([5])
        #expect(readBytes(pair.reader, 10).bytes == [5])
        #expect(geotify_buffered_socket_drained() == 0, "bytes came since")
    }

    @Test("a short read gives what is at hand; the end of the stream reads as 0")
    func shortReadAndEnd() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        pair.send([1, 2, 3])
        let first = readBytes(pair.reader, 2)
        #expect(first.bytes == [1, 2])
        #expect(geotify_buffered_socket_pending() == 1)
        let second = readBytes(pair.reader, 10)
        #expect(second.bytes == [3], "a short read: what is at hand, without waiting for more")
        #expect(pair.closeWriterAndWaitForHangUp())
        #expect(readBytes(pair.reader, 10).result == 0)
    }

    @Test("a read as large as the buffer or larger goes straight to the caller's memory")
    func largeReadBypassesBuffer() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader); _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        let sent = (0..<100_000).map { UInt8(truncatingIfNeeded: $0) }
        let writer = Thread { pair.send(sent) }
        writer.start()
        var received: [UInt8] = []
        var waits = 0
        var reads = 0
        while received.count < sent.count && waits < 1_000 {
            // Always asking for as much as the buffer holds or more, as a large packet's
            // payload does: exactly 64 KiB first, then more, in turn.
            let (result, bytes, _) = readBytes(pair.reader, reads % 2 == 0 ? 65_536 : sent.count)
            if result > 0 {
                reads += 1
                received += bytes
            } else {
                waits += 1
                var readable = pollfd(fd: pair.reader, events: Int16(POLLIN), revents: 0)
                _ = poll(&readable, 1, 100)
            }
        }
        #expect(received == sent)
        #expect(geotify_buffered_socket_fills() == 0, "reads of 64 KiB or more are not buffered")
    }

    @Test("other descriptors and other threads read from the kernel, untouched")
    func othersPassThrough() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader); _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        pair.send([9, 8, 7])

        let other = try SocketPair()
        defer { _ = close(other.reader); _ = close(other.writer) }
        other.send([1, 2, 3])
        #expect(readBytes(other.reader, 1).bytes == [1], "another descriptor: one byte, straight from the kernel")
        #expect(readBytes(other.reader, 10).bytes == [2, 3])

        let fromAnotherThread = Mutex<[UInt8]>([])
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let (_, bytes, _) = readBytes(pair.reader, 1)
            fromAnotherThread.withLock { $0 = bytes }
            done.signal()
        }
        thread.start()
        done.wait()
        #expect(fromAnotherThread.withLock { $0 } == [9], "another thread's read of the socket is the kernel's")
        #expect(readBytes(pair.reader, 10).bytes == [8, 7])
        #expect(geotify_buffered_socket_fills() == 1)
    }

    @Test("closing the attached socket detaches it and drops what was buffered")
    func closeDetaches() throws {
        let pair = try SocketPair()
        defer { _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        pair.send([1, 2, 3, 4])
        #expect(readBytes(pair.reader, 1).bytes == [1])
        #expect(geotify_buffered_socket_pending() == 3)
        #expect(geotify_buffered_socket_socket() == pair.reader)
        #expect(close(pair.reader) == 0)
        // The number may be given to the next socket or file anyone opens: nothing of the
        // closed one may be served under it.
        #expect(geotify_buffered_socket_socket() == -1)
        #expect(geotify_buffered_socket_pending() == 0)
    }

    @Test("attaching another socket drops what was buffered for the first")
    func attachAnotherDrops() throws {
        let first = try SocketPair()
        let second = try SocketPair()
        defer {
            geotify_buffered_socket_detach()
            for end in [first.reader, first.writer, second.reader, second.writer] { _ = close(end) }
        }
        #expect(geotify_buffered_socket_attach(first.reader) == 0)
        first.send([1, 2, 3])
        #expect(readBytes(first.reader, 1).bytes == [1])
        #expect(geotify_buffered_socket_attach(second.reader) == 0)
        #expect(geotify_buffered_socket_pending() == 0)
        second.send([7])
        #expect(readBytes(second.reader, 10).bytes == [7])
        let dropped = readBytes(first.reader, 10)
        #expect(dropped.result == -1 && dropped.errno == EAGAIN, "the first socket's buffered bytes went with its buffer")
    }

    /// Reads what has arrived at `descriptor` (a blocking read of the other end).
    private func drain(_ descriptor: Int32, expecting count: Int) -> [UInt8] {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while received.count < count {
            let result = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard result > 0 else { break }
            received += buffer.prefix(result)
        }
        return received
    }

    @Test("writes are gathered until the flush, which sends them in order with one system call")
    func writesWaitForTheFlush() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader); _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        var sent: [UInt8] = []
        for index in 0..<100 {
            let packet = [UInt8](repeating: UInt8(index), count: 1 + index % 7)
            let result = packet.withUnsafeBytes { write(pair.reader, $0.baseAddress, $0.count) }
            #expect(result == packet.count)
            sent += packet
        }
        #expect(geotify_buffered_socket_unsent() == sent.count)
        var waiting = pollfd(fd: pair.writer, events: Int16(POLLIN), revents: 0)
        #expect(poll(&waiting, 1, 0) == 0, "nothing reached the other end before the flush")

        #expect(geotify_buffered_socket_flush() == 0)
        #expect(geotify_buffered_socket_unsent() == 0)
        #expect(geotify_buffered_socket_flushes() == 1)
        #expect(drain(pair.writer, expecting: sent.count) == sent)
    }

    @Test("a flush that writes a single byte leaves nothing gathered")
    func aSingleByteIsFlushedOnce() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader); _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        #expect([UInt8(1)].withUnsafeBytes { write(pair.reader, $0.baseAddress, 1) } == 1)
        #expect(geotify_buffered_socket_flush() == 0)
        #expect(geotify_buffered_socket_unsent() == 0)
        #expect([UInt8(2)].withUnsafeBytes { write(pair.reader, $0.baseAddress, 1) } == 1)
        #expect(geotify_buffered_socket_flush() == 0)
        #expect(drain(pair.writer, expecting: 2) == [1, 2], "each byte sent once, in order")
    }

    @Test("writes that fill the buffer exactly are gathered; the next one first flushes them")
    func writesFillingTheBufferExactly() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader); _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        let first = [UInt8](repeating: 1, count: 65_536 - 10)
        let second = [UInt8](repeating: 2, count: 10)
        #expect(first.withUnsafeBytes { write(pair.reader, $0.baseAddress, $0.count) } == first.count)
        #expect(second.withUnsafeBytes { write(pair.reader, $0.baseAddress, $0.count) } == second.count)
        #expect(geotify_buffered_socket_unsent() == 65_536)
        #expect(geotify_buffered_socket_flushes() == 0, "64 KiB fit the buffer: nothing was written yet")
        var waiting = pollfd(fd: pair.writer, events: Int16(POLLIN), revents: 0)
        #expect(poll(&waiting, 1, 0) == 0)

        #expect([UInt8(3)].withUnsafeBytes { write(pair.reader, $0.baseAddress, 1) } == 1)
        #expect(geotify_buffered_socket_flushes() == 1, "one byte more: the buffer was flushed to make room")
        #expect(geotify_buffered_socket_unsent() == 1)
        #expect(geotify_buffered_socket_flush() == 0)
        #expect(drain(pair.writer, expecting: 65_537) == first + second + [3])
    }

    @Test("a write that needs room, to a connection the other end closed, fails with EPIPE")
    func aWriteThatFlushesToAClosedPeerFails() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        #expect(pair.closeWriterAndWaitForHangUp())
        let gathered = [UInt8](repeating: 1, count: 60_000)
        #expect(gathered.withUnsafeBytes { write(pair.reader, $0.baseAddress, $0.count) } == gathered.count)
        let more = [UInt8](repeating: 2, count: 10_000)
        errno = 0
        #expect(more.withUnsafeBytes { write(pair.reader, $0.baseAddress, $0.count) } == -1)
        // Not EAGAIN, which libmosquitto would take as "later" and keep the packet for a
        // connection that is gone.
        #expect(errno == EPIPE)
    }

    @Test("when the kernel takes no more, a write that does not fit is refused with EAGAIN and nothing is lost or reordered")
    func fullKernelRefusesWithEAGAIN() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader); _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        var sent: [UInt8] = []
        var refused = false
        var index = 0
        // Nobody reads the other end: the kernel's buffers fill, then this one.
        while !refused && index < 100_000 {
            let packet = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 1_000)
            errno = 0
            let result = packet.withUnsafeBytes { write(pair.reader, $0.baseAddress, $0.count) }
            if result == packet.count {
                sent += packet
            } else {
                #expect(result == -1 && errno == EAGAIN)
                refused = true
            }
            index += 1
        }
        #expect(refused)
        #expect(geotify_buffered_socket_unsent() > 0)

        // The other end reads while this one flushes what it gathered.
        let received = Mutex<[UInt8]>([])
        let done = DispatchSemaphore(value: 0)
        let expected = sent.count
        let reader = Thread {
            let bytes = drain(pair.writer, expecting: expected)
            received.withLock { $0 = bytes }
            done.signal()
        }
        reader.start()
        var flushes = 0
        while geotify_buffered_socket_unsent() > 0 && flushes < 1_000_000 {
            #expect(geotify_buffered_socket_flush() == 0)
            flushes += 1
            var writable = pollfd(fd: pair.reader, events: Int16(POLLOUT), revents: 0)
            _ = poll(&writable, 1, 100)
        }
        done.wait()
        #expect(received.withLock { $0 } == sent)
    }

    @Test("closing the attached socket sends what was gathered first")
    func closeSendsTheRest() throws {
        let pair = try SocketPair()
        defer { _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        let goodbye: [UInt8] = [0xE0, 0x00] // an MQTT DISCONNECT
        #expect(goodbye.withUnsafeBytes { write(pair.reader, $0.baseAddress, $0.count) } == 2)
        #expect(close(pair.reader) == 0)
        #expect(geotify_buffered_socket_socket() == -1)
        #expect(geotify_buffered_socket_dropped() == 0)
        #expect(drain(pair.writer, expecting: 2) == goodbye)
    }

    /// Writes 1 000-byte packets to `pair`'s reader, which nobody reads from the other end,
    /// until one is refused: the kernel's buffers are full, then this one's. Returns what
    /// was taken.
    private func fillUntilRefused(_ pair: SocketPair) -> [UInt8] {
        var sent: [UInt8] = []
        for index in 0..<100_000 {
            let packet = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: 1_000)
            guard packet.withUnsafeBytes({ write(pair.reader, $0.baseAddress, $0.count) }) == packet.count else { break }
            sent += packet
        }
        return sent
    }

    @Test("closing the attached socket waits for the kernel to take what was gathered")
    func closeWaitsForTheKernel() throws {
        let pair = try SocketPair()
        defer { _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        let sent = fillUntilRefused(pair)
        #expect(geotify_buffered_socket_unsent() > 0)

        // The other end starts reading only once the close waits for room (in poll), so
        // what was gathered can only leave if the close waits.
        let closing = try ThreadInKernel.current()
        let received = Mutex<[UInt8]>([])
        let done = DispatchSemaphore(value: 0)
        let expected = sent.count
        let reader = Thread {
            waitUntil { closing.polls }
            let bytes = drain(pair.writer, expecting: expected)
            received.withLock { $0 = bytes }
            done.signal()
        }
        reader.start()
        #expect(close(pair.reader) == 0)
        done.wait()
        #expect(received.withLock { $0.count } == sent.count)
        #expect(received.withLock { $0 } == sent)
        #expect(geotify_buffered_socket_dropped() == 0)
    }

    @Test("closing when the other end reads nothing gives up, drops what was gathered and says how much", .timeLimit(.minutes(1)))
    func closeGivesUp() throws {
        let pair = try SocketPair()
        defer { _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        let sent = fillUntilRefused(pair)
        let gathered = geotify_buffered_socket_unsent()
        #expect(gathered > 0)
        #expect(close(pair.reader) == 0)
        #expect(geotify_buffered_socket_socket() == -1)
        #expect(geotify_buffered_socket_dropped() == gathered)
        #expect(drain(pair.writer, expecting: sent.count).count == sent.count - gathered, "the kernel's part arrives, then the end")
        #expect(geotify_buffered_socket_attach(pair.writer) == 0)
        #expect(geotify_buffered_socket_dropped() == 0, "attaching a socket starts the count again")
        geotify_buffered_socket_detach()
    }

    @Test("a write larger than the buffer goes to the kernel after what was gathered")
    func largeWriteAfterGathered() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader); _ = close(pair.writer) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        let small: [UInt8] = [1, 2, 3]
        #expect(small.withUnsafeBytes { write(pair.reader, $0.baseAddress, $0.count) } == 3)
        let large = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 3) }
        let received = Mutex<[UInt8]>([])
        let done = DispatchSemaphore(value: 0)
        let reader = Thread {
            let bytes = drain(pair.writer, expecting: 3 + large.count)
            received.withLock { $0 = bytes }
            done.signal()
        }
        reader.start()
        var offset = 0
        var attempts = 0
        while offset < large.count && attempts < 1_000_000 {
            let result = large[offset...].withUnsafeBytes { write(pair.reader, $0.baseAddress, $0.count) }
            if result > 0 { offset += result } else {
                var writable = pollfd(fd: pair.reader, events: Int16(POLLOUT), revents: 0)
                _ = poll(&writable, 1, 100)
            }
            attempts += 1
        }
        _ = geotify_buffered_socket_flush()
        done.wait()
        #expect(received.withLock { $0 } == small + large)
    }

    @Test("a flush to a connection the other end closed fails with EPIPE, without a SIGPIPE")
    func flushToAClosedPeerFails() throws {
        let pair = try SocketPair()
        defer { geotify_buffered_socket_detach(); _ = close(pair.reader) }
        #expect(geotify_buffered_socket_attach(pair.reader) == 0)
        #expect(pair.closeWriterAndWaitForHangUp())
        #expect([UInt8(1)].withUnsafeBytes { write(pair.reader, $0.baseAddress, 1) } == 1)
        errno = 0
        #expect(geotify_buffered_socket_flush() == -1)
        #expect(errno == EPIPE)
    }
}
