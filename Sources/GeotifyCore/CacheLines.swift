import CPrefetch

/// Prefetch hints: start loading memory a computation is about to read, so that the
/// cache misses of scattered data overlap instead of coming one after another.
///
/// Fixes arrive device after device, so the data of a device's fences and state is
/// rarely in the cache when its fix is evaluated, and each cold cache line waits for
/// memory (about 200 ns on the machine the benchmarks run on, ten times the geometry it
/// feeds). Asking for the lines an evaluation reads before reading the first makes those
/// waits overlap. A hint never changes a result, and may point anywhere.
enum CacheLines {
    /// The length of a cache line on the processors Geotify runs on.
    static let length = 64

    /// Asks for every cache line that holds one of the `byteCount` bytes from `start`.
    @inline(__always)
    static func prefetch(_ start: UnsafeRawPointer?, byteCount: Int) {
        guard let start else { return }
        let end = Int(bitPattern: start) + byteCount
        var line = Int(bitPattern: start) & ~(length - 1)
        while line < end {
            geotify_prefetch(UnsafeRawPointer(bitPattern: line))
            line += length
        }
    }

    /// Asks for the cache lines of an array's storage that hold its count and its first
    /// `count` elements (a count the caller guesses: reading the array's own would wait
    /// for the very line being asked for).
    @inline(__always)
    static func prefetch<Element>(_ array: [Element], first count: Int) {
        array.withUnsafeBufferPointer { elements in
            // The storage object's header (its count among it) is 32 bytes before the
            // elements.
            prefetch(UnsafeRawPointer(elements.baseAddress).map { $0 - 32 }, byteCount: 32 + count * MemoryLayout<Element>.stride)
        }
    }
}
