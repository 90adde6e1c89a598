import Foundation

/// How many bytes the calling thread has had from read(2) and its kin (`rchar` in
/// /proc/thread-self/io, which the kernel keeps for each thread): for a test that must
/// know how much a call read, not only what it returned. Reading the file is a read
/// too, counted once it returns: `bytesRead(since:)` takes off the bytes of the reading
/// that took the earlier count.
package struct ThreadReadBytes: Sendable {
    /// `rchar` when the file was read.
    package let total: Int
    /// The bytes that reading the file returned.
    let reading: Int

    /// The calling thread's count now, read with one read(2) (the file is a few lines).
    package static func now() throws -> ThreadReadBytes {
        let descriptor = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw TestSupportError("cannot open /proc/thread-self/io: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let count = read(descriptor, &buffer, buffer.count)
        let text = String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("rchar: ") }),
              let total = Int(line.dropFirst("rchar: ".count)) else {
            throw TestSupportError("no rchar in /proc/thread-self/io: \(text)")
        }
        return ThreadReadBytes(total: total, reading: count)
    }

    /// The bytes this thread read between `earlier` and this count, beside reading the file.
    package func bytesRead(since earlier: ThreadReadBytes) -> Int {
        total - earlier.total - earlier.reading
    }
}
