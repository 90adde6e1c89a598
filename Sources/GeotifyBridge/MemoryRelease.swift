#if canImport(Glibc)
import Glibc
#endif

/// Keeps the memory glibc's allocator holds small: `malloc_trim` gives back what it no
/// longer uses after work that made much short-lived garbage (reading the fence file and
/// the state at start), and `mallopt(M_ARENA_MAX)` keeps it from making an arena for
/// every thread. Glibc's Swift module exports neither.
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
}
