import Foundation

/// How many bytes the calling thread has had from read(2) and its kin, and in how many
/// calls (`rchar` and `syscr` in /proc/thread-self/io, which the kernel keeps for each
/// thread): for a test that must know how much a call read, and how, not only what it
/// returned. Reading the file is a read too, counted once it returns:
/// `bytesRead(since:)` and `readCalls(since:)` take off the reading that took the
/// earlier count.
package struct ThreadReads: Sendable {
    /// `rchar` when the file was read.
    package let total: Int
    /// `syscr` when the file was read.
    package let calls: Int
    /// The bytes that reading the file returned.
    let reading: Int

    /// The calling thread's count now, read with one read(2) (the file is a few lines).
    package static func now() throws -> ThreadReads {
        let descriptor = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw TestSupportError("cannot open /proc/thread-self/io: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let count = read(descriptor, &buffer, buffer.count)
        let text = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
        func field(_ name: String) -> Int? {
            text.split(separator: "\n").first { $0.hasPrefix("\(name): ") }.flatMap { Int($0.dropFirst(name.count + 2)) }
        }
        guard let total = field("rchar"), let calls = field("syscr") else {
            throw TestSupportError("no rchar or syscr in /proc/thread-self/io: \(text)")
        }
        return ThreadReads(total: total, calls: calls, reading: count)
    }

    /// The bytes this thread read between `earlier` and this count, beside reading the file.
    package func bytesRead(since earlier: ThreadReads) -> Int {
        total - earlier.total - earlier.reading
    }

    /// The read calls this thread made between `earlier` and this count, beside the one
    /// that read the file.
    package func readCalls(since earlier: ThreadReads) -> Int {
        calls - earlier.calls - 1
    }
}
