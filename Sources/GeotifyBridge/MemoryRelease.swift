#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import GeotifyTime

/// Keeps the bridge's resident memory small: `malloc_trim` gives back what glibc's
/// allocator no longer uses after work that made much short-lived garbage (reading the
/// fence file and the state at start, a reload, devices forgotten), `mallopt(M_ARENA_MAX)`
/// keeps it from making an arena for every thread (Glibc's Swift module exports neither),
/// and `dropStartupPages` lets go of the mapped code and constants only starting used.
///
/// Each acts on the whole process, so the process decides: `geotify run` calls them, and
/// `Bridge` does not. A bridge inside another process (the tests run hundreds) leaves
/// that process's heap alone; trimming it from every bridge's housekeeping cost the test
/// suite 1 600 trims of a heap of many threads' arenas.
package enum MemoryRelease {
    @_silgen_name("malloc_trim")
    private static func mallocTrim(_ padding: Int) -> Int32

    @_silgen_name("mallopt")
    private static func mallopt(_ parameter: Int32, _ value: Int32) -> Int32

    /// glibc's `M_ARENA_MAX`.
    private static let arenaMaximum: Int32 = -8

    /// Two arenas rather than one per thread: the bridge's threads mostly take turns, and
    /// every arena keeps free memory of its own. Call before starting threads.
    package static func limitArenas() {
        _ = mallopt(arenaMaximum, 2)
    }

    /// Returns free heap pages to the system.
    package static func now() {
        _ = mallocTrim(0)
    }

    /// Returns free heap pages to the system now, and then every `interval` seconds of
    /// `scheduler`'s clock, until the returned work is cancelled.
    package static func keepTrimming(every interval: Double, scheduler: any Scheduler) -> ScheduledWork {
        now()
        return scheduler.repeating(every: interval, on: DispatchQueue(label: "geotify.memory-release")) { now() }
    }

    /// Unmaps the resident pages of the process's read-only file mappings whose pages are
    /// all as in the file (code and constants of the binary and its libraries; never a
    /// mapping with a page of its own, such as relocated data), so that only the pages
    /// used from now on come back, each from the page cache on its first touch. Starting
    /// touched far more code than running does (settings, the fence file, the state, the
    /// schema, each in up to 64 kB pieces: docs/memory.md). Returns the bytes unmapped.
    @discardableResult
    package static func dropStartupPages() -> Int {
        guard let smaps = kernelFile("/proc/self/smaps") else { return 0 }
        return dropStartupPages(smaps: smaps)
    }

    /// `dropStartupPages()` for the mappings `smaps` describes.
    @discardableResult
    package static func dropStartupPages(smaps: String) -> Int {
        var dropped = 0
        for mapping in FileMapping.clean(in: smaps) {
            guard let start = UnsafeMutableRawPointer(bitPattern: mapping.start) else { continue }
            if madvise(start, mapping.end - mapping.start, MADV_DONTNEED) == 0 { dropped += mapping.resident }
        }
        return dropped
    }

    /// The text of a file the kernel makes as it is read, such as `/proc/self/smaps`:
    /// read to its end, since its size says 0 (Foundation's readers stopped after the
    /// first 4 kB).
    package static func kernelFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
