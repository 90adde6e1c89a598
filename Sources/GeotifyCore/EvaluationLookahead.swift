/// Asks for the cache lines the evaluation of a fix will read a few fixes before it is
/// evaluated, so that a run of fixes of different devices (a lane's batch) waits for
/// memory while the fixes before it are evaluated rather than fix by fix.
///
/// A fix's cold lines form a chain: the device's `DeviceFences` object and `DeviceState`
/// say where its `OwnFenceTable` and its state's entries are, and the table's boxes say
/// which fences' records the fix reads. A prefetch of a line whose address is itself
/// still on its way waits for it, so each stage asks only for lines whose addresses the
/// stage before brought into the cache:
///
/// 1. `objects`, 2 × `distance` fixes ahead: the `DeviceFences` object's first line and
///    the place where the caller keeps the device's `DeviceState`
///    (`place(_:byteCount:)`);
/// 2. `tables`, `distance` fixes ahead: the table's head (grid, boxes and record
///    starts), and the state's first entries.
///
/// The evaluation then finds them in the cache, and asks for the records of the fences
/// near the fix itself once it has scanned the boxes (`CacheLines`): a third stage that
/// scanned the boxes ahead for them cost as much as it saved (see
/// docs/own-fence-evaluation.md). The caller drives the stages over the fixes it is about
/// to evaluate in order (`fixes(before:count:)`): `LaneCore` over a batch, the benchmark
/// over its runs of fixes. A hint never changes a result: the evaluation reads what it
/// reads whether or not it was asked for.
package enum EvaluationLookahead {
    /// What is asked for, in order (see the type's description).
    package enum Stage: Sendable {
        case objects
        case tables
    }

    /// How many fixes apart the stages work: about a microsecond of evaluation here, more
    /// than a miss's latency (180 ns) with a margin for the misses queued behind it.
    @usableFromInline
    static let distance = 3

    /// The fixes (positions in `0..<count`) each stage works on before fix `index` is
    /// evaluated: one for each while there is one that far ahead, and before the first
    /// fix also `objects` for the fixes `tables` reaches before `objects` would have. Each
    /// fix is then worked on by `objects` once, and by `tables` once from position
    /// `distance` on, in order and before it is evaluated. (Ranges rather than a callback,
    /// so that a caller's mutating loop need not capture itself, which copies the
    /// tables it reads.)
    @inlinable
    package static func fixes(before index: Int, count: Int) -> (objects: Range<Int>, tables: Range<Int>) {
        let objects = min(count, index + 2 * distance)..<min(count, index + 2 * distance + 1)
        let tables = min(count, index + distance)..<min(count, index + distance + 1)
        return (index == 0 ? 0..<objects.upperBound : objects, tables)
    }

    // The device's fences come unmanaged: a caller's copy of the reference would retain
    // it, a write to the very line `objects` asks for, and so wait for it.

    /// Stage `objects` for the device's fences: their object's first line.
    @inline(__always)
    package static func objects(_ fences: Unmanaged<DeviceFences>) {
        CacheLines.prefetch(UnsafeRawPointer(fences.toOpaque()), byteCount: CacheLines.length)
    }

    /// Stage `objects` for the device's state: the `byteCount` bytes from `start` where
    /// the caller keeps it (its `DeviceState`, or a record holding it, in an array).
    @inline(__always)
    package static func place(_ start: UnsafeRawPointer?, byteCount: Int) {
        CacheLines.prefetch(start, byteCount: byteCount)
    }

    /// Stage `tables`: the own fences' head (grid, boxes and record starts), and the first
    /// entries of the device's state (`entries`: the base address of its
    /// `DeviceState.fences`, nil when the caller has no state for the device).
    @inline(__always)
    package static func tables(_ fences: Unmanaged<DeviceFences>, entries: UnsafeRawPointer?) {
        fences._withUnsafeGuaranteedRef { $0.table.prefetchBoxes() }
        // The storage's header (its count among it) is 32 bytes before the elements.
        CacheLines.prefetch(entries.map { $0 - 32 }, byteCount: 32 + 3 * MemoryLayout<FenceState>.stride)
    }
}
