#if canImport(Glibc)
import Glibc
#endif

/// Bytes placed so that they end where a page the process may not touch begins, for
/// tests of readers of untrusted input that work on unsafe buffers (the JSON parser, the
/// flat-object scan): a read one byte past the text's end stops the test with SIGSEGV
/// instead of reading whatever the heap held there, which usually gives the same answer
/// and so goes unnoticed (Swift checks an `UnsafeBufferPointer`'s index only in code
/// compiled without optimization, and `GeotifyJSON` is optimized in the tests' build too:
/// `Package.swift`).
///
/// One mapping of two pages serves every text of up to one page; it is unmapped with the
/// value. Not `Sendable`: a test uses its own.
package final class PageEndBuffer {
    private let base: UnsafeMutableRawPointer
    private let pageSize: Int

    package init() {
        pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let mapping = mmap(nil, 2 * pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let mapping, mapping != MAP_FAILED else { fatalError("mmap of two pages failed: errno \(errno)") }
        base = mapping
        guard mprotect(base + pageSize, pageSize, PROT_NONE) == 0 else { fatalError("mprotect failed: errno \(errno)") }
    }

    deinit {
        munmap(base, 2 * pageSize)
    }

    /// Calls `body` with `bytes` copied to the very end of the readable page.
    package func with<Result>(_ bytes: [UInt8], _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        precondition(bytes.count <= pageSize, "a text of \(bytes.count) bytes does not fit one page")
        let start = (base + pageSize - bytes.count).assumingMemoryBound(to: UInt8.self)
        bytes.withUnsafeBufferPointer { source in
            if let from = source.baseAddress { start.update(from: from, count: source.count) }
        }
        return try body(UnsafeBufferPointer(start: start, count: bytes.count))
    }
}
