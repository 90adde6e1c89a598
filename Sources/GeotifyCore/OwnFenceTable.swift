import Foundation

/// A device's own fences as the evaluator reads them for every fix, in one contiguous
/// block of 8-byte words of its own, from the start of a cache line, so that a fix
/// touches as few cache lines as it can:
///
/// - the device's `BoxGrid` (four words);
/// - every fence's box on that grid, one word a fence, in the order of the fences: what
///   every fix scans;
/// - the cache line where each fence's record starts (and the last one ends), counted
///   from the block's start, in 2 bytes each (4 when the block has more lines than 2
///   bytes count: some 65 000 circles or a polygon of 175 000 vertices): the head,
///   4 lines for 20 fences;
/// - the records, each from the start of a cache line: the shape (`FenceShape`, eight
///   words: a circle's latitude, longitude, radius and cosine of its latitude, or for a
///   polygon its run's start and end, -1 and its size; the revision it was added in;
///   whether it overrides the rules; its `IdentifierKey`), then for a polygon its
///   `InteriorDisc` (a line of its own, a radius of 0 when it has none), its
///   `ClearanceGrid` (five lines, zeros when it has none) and its run (`PolygonGeometry`).
///
/// Fixes arrive device after device, so a device's fence data is cold for nearly every
/// fix, and memory is the cost: each cache line a fix reads waits for memory (about
/// 200 ns here, ten times the geometry it feeds) or, asked for ahead (`CacheLines`),
/// still takes its share of the memory's bandwidth. A fix reads the head, then the first
/// line of the record of each fence whose box holds it (three for a polygon: shape, disc
/// and the clearance grid's numbers; then the line of the fix's cell when the disc does
/// not decide, and the edges only when the cell does not either); no `Fence`, polygon
/// storage or identifier, and no reference, so no retain or release either.
///
/// Why `@unchecked Sendable` is sound: the block is written only in `init`, before the
/// value exists, and never after (`View` reads it through an `UnsafePointer`; debug
/// builds assert, when it is freed, that its bits are still those written); `storage`
/// frees it only when the last copy of the table is gone.
struct OwnFenceTable: @unchecked Sendable {
    // Stored in 24 bytes, so that the table shares the first cache line of its
    // `DeviceFences` object with the object's header and the properties after it.
    private let storedCount: Int32
    /// Whether the record starts take 4 bytes each rather than 2.
    private let wideStarts: Bool
    /// The block's first word (`storage`'s memory, kept here so reading it costs no
    /// indirection).
    private let base: UnsafePointer<Double>
    private let storage: Storage

    /// How many fences.
    var count: Int { Int(storedCount) }

    /// The words of a cache line, of the grid and of a shape.
    fileprivate static let lineWords = CacheLines.length / MemoryLayout<Double>.stride
    fileprivate static let gridWords = 4
    fileprivate static let shapeWords = 8
    /// The words of a polygon's record after its shape and before its run: its
    /// `InteriorDisc` (a line) and its `ClearanceGrid` (from a line of its own).
    fileprivate static let polygonWords = (1 + (ClearanceGrid.wordCount + lineWords - 1) / lineWords) * lineWords

    init(_ fences: [Fence]) {
        let lineWords = OwnFenceTable.lineWords
        let boxesEnd = OwnFenceTable.gridWords + fences.count
        var lineCounts: [Int] = []
        for fence in fences {
            var length = OwnFenceTable.shapeWords
            if case .polygon(let polygon) = fence.region { length += OwnFenceTable.polygonWords + polygon.run.count }
            lineCounts.append((length + lineWords - 1) / lineWords)
        }
        // The lines of the head with record starts of `width` bytes.
        let headLines = { (width: Int) in (boxesEnd * MemoryLayout<Double>.stride + (fences.count + 1) * width + CacheLines.length - 1) / CacheLines.length }
        let wide = headLines(2) + lineCounts.reduce(0, +) > Int(UInt16.max)
        let width = wide ? 4 : 2
        var startLines = [headLines(width)]
        for lines in lineCounts { startLines.append(startLines[startLines.count - 1] + lines) }
        var words = [Double](repeating: 0, count: startLines[startLines.count - 1] * lineWords)
        let grid = BoxGrid(fences.map(\.boundingBox))
        words.replaceSubrange(0..<OwnFenceTable.gridWords, with: [grid.south, grid.west, grid.rowsPerDegree, grid.columnsPerDegree])
        for (index, fence) in fences.enumerated() {
            words[OwnFenceTable.gridWords + index] = Double(bitPattern: grid.box(fence.boundingBox).bits)
        }
        for (index, fence) in fences.enumerated() {
            let start = startLines[index] * lineWords
            var shape: [Double]
            switch fence.region {
            case .circle(let center, let radius):
                shape = [center.latitude, center.longitude, radius, cos(center.latitude * .pi / 180)]
            case .polygon(let polygon):
                let disc = start + OwnFenceTable.shapeWords
                let grid = disc + lineWords
                let run = start + OwnFenceTable.shapeWords + OwnFenceTable.polygonWords
                shape = [Double(run), Double(run + polygon.run.count), -1, fence.size]
                words.replaceSubrange(run..<(run + polygon.run.count), with: polygon.run)
                let interior = polygon.withGeometry { InteriorDisc($0, center: polygon.center) }
                if let interior { words.replaceSubrange(disc..<(disc + InteriorDisc.wordCount), with: interior.words) }
                if let cells = polygon.withGeometry(ClearanceGrid.words) {
                    words.replaceSubrange(grid..<(grid + ClearanceGrid.wordCount), with: cells)
                }
            }
            let key = IdentifierKey.words(IdentifierKey(fence.identifier))
            shape += [
                Double(bitPattern: UInt64(bitPattern: Int64(fence.addedRevision))), fence.overridesRules ? 1 : 0, key.0, key.1,
            ]
            words.replaceSubrange(start..<(start + OwnFenceTable.shapeWords), with: shape)
        }
        words.withUnsafeMutableBytes { bytes in
            for (index, line) in startLines.enumerated() {
                let offset = boxesEnd * MemoryLayout<Double>.stride + index * width
                if wide {
                    bytes.storeBytes(of: UInt32(line), toByteOffset: offset, as: UInt32.self)
                } else {
                    bytes.storeBytes(of: UInt16(line), toByteOffset: offset, as: UInt16.self)
                }
            }
        }
        storage = Storage(words)
        base = UnsafePointer(storage.words)
        storedCount = Int32(fences.count)
        wideStarts = wide
    }

    /// Asks for the cache lines of the head (see `CacheLines`): what a fix reads first.
    @inline(__always)
    func prefetchBoxes() {
        withView { own in CacheLines.prefetch(UnsafeRawPointer(own.words.baseAddress), byteCount: own.headByteCount) }
    }

    /// Calls `body` with a view of the table.
    @inline(__always)
    func withView<Result>(_ body: (View) -> Result) -> Result {
        // `storage` lives as long as `self`, which the caller holds through the call.
        let end = OwnFenceTable.recordStart(count, base: UnsafeRawPointer(base), count: count, wideStarts: wideStarts)
        return body(View(words: UnsafeBufferPointer(start: base, count: end), count: count, wideStarts: wideStarts))
    }

    /// The word where record `index` starts in the block at `base` of `count` fences.
    @inline(__always)
    fileprivate static func recordStart(_ index: Int, base: UnsafeRawPointer, count: Int, wideStarts: Bool) -> Int {
        let starts = (gridWords + count) * MemoryLayout<Double>.stride
        let line = wideStarts
            ? Int(base.load(fromByteOffset: starts + 4 * index, as: UInt32.self))
            : Int(base.load(fromByteOffset: starts + 2 * index, as: UInt16.self))
        return line * lineWords
    }

    /// The block, 64-byte aligned, freed with the last copy of its table.
    /// In debug builds the block's bits are kept as they were written and compared when it
    /// is freed: a write through any pointer after `init` (which `@unchecked Sendable`
    /// rules out) fails that assertion.
    private final class Storage {
        let words: UnsafeMutablePointer<Double>
        let count: Int
        #if DEBUG
        private let written: [UInt64]
        #endif

        init(_ contents: [Double]) {
            let raw = UnsafeMutableRawPointer.allocate(byteCount: contents.count * MemoryLayout<Double>.stride, alignment: CacheLines.length)
            words = raw.initializeMemory(as: Double.self, from: contents, count: contents.count)
            count = contents.count
            #if DEBUG
            written = contents.map(\.bitPattern)
            #endif
        }

        deinit {
            #if DEBUG
            // Not `assert`: this module is optimised in debug builds too (Package.swift),
            // which drops it (and `precondition`'s message).
            if UnsafeBufferPointer(start: words, count: count).map(\.bitPattern) != written {
                fatalError("an own-fence table was changed after it was made")
            }
            #endif
            words.deallocate()
        }
    }

    /// The table read in place.
    struct View {
        fileprivate let words: UnsafeBufferPointer<Double>
        /// How many fences.
        let count: Int
        fileprivate let wideStarts: Bool

        /// Where the block starts: on a cache line.
        @inline(__always)
        var baseAddress: UnsafeRawPointer { UnsafeRawPointer(words.baseAddress!) }

        /// The bytes of the head: the grid, the boxes and the record starts.
        var headByteCount: Int {
            (OwnFenceTable.gridWords + count) * MemoryLayout<Double>.stride + (count + 1) * (wideStarts ? 4 : 2)
        }

        /// The grid the boxes are on.
        @inline(__always)
        var grid: BoxGrid {
            BoxGrid(south: words[0], west: words[1], rowsPerDegree: words[2], columnsPerDegree: words[3])
        }

        /// The box of fence `index`, on `grid`.
        @inline(__always)
        func box(_ index: Int) -> BoxGrid.Box {
            BoxGrid.Box(bits: words[OwnFenceTable.gridWords + index].bitPattern)
        }

        /// The word where fence `index`'s record starts (for `index` = `count`, where the
        /// last ends), on a cache line.
        @inline(__always)
        func recordStart(_ index: Int) -> Int {
            OwnFenceTable.recordStart(index, base: baseAddress, count: count, wideStarts: wideStarts)
        }

        /// The shape of fence `index`.
        @inline(__always)
        func shape(_ index: Int) -> FenceShape {
            let start = recordStart(index)
            let radius = words[start + 2]
            return FenceShape(
                latitude: words[start], longitude: words[start + 1], radius: radius,
                cosineOfLatitude: words[start + 3], size: radius >= 0 ? radius : words[start + 3],
                addedRevision: Int(Int64(bitPattern: words[start + 4].bitPattern)), overridesRules: words[start + 5] != 0)
        }

        /// The identifier key of fence `index`, nil when its identifier has none.
        @inline(__always)
        func identifierKey(_ index: Int) -> IdentifierKey? {
            let start = recordStart(index)
            return IdentifierKey(words: (words[start + 6], words[start + 7]))
        }

        /// Asks for the cache lines of fence `index`'s record that a fix reads first (see
        /// `CacheLines`): a circle's shape, or a polygon's shape, disc and clearance grid's
        /// numbers (the line of the fix's cell is read only for a fix the disc does not
        /// decide, its edges only for one neither decides).
        @inline(__always)
        func prefetchRecord(_ index: Int) {
            let start = recordStart(index)
            let wordCount = min(3 * OwnFenceTable.lineWords, recordStart(index + 1) - start)
            CacheLines.prefetch(
                UnsafeRawPointer(words.baseAddress.map { $0 + start }), byteCount: wordCount * MemoryLayout<Double>.stride)
        }

        /// The interior disc of fence `index`'s polygon, nil when it has none (or is a
        /// circle).
        @inline(__always)
        func interiorDisc(_ index: Int) -> InteriorDisc? {
            let record = recordStart(index)
            let start = record + OwnFenceTable.shapeWords
            guard words[record + 2] < 0, words[start + 2] > 0 else { return nil }
            return InteriorDisc(words: UnsafeBufferPointer(rebasing: words[start..<(start + InteriorDisc.wordCount)]))
        }

        /// The clearance grid of fence `index`'s polygon, nil when it has none (or is a
        /// circle).
        @inline(__always)
        func clearanceGrid(_ index: Int) -> ClearanceGrid? {
            let record = recordStart(index)
            let start = record + OwnFenceTable.shapeWords + OwnFenceTable.lineWords
            guard words[record + 2] < 0 else { return nil }
            let grid = ClearanceGrid(words: UnsafeBufferPointer(rebasing: words[start..<(start + ClearanceGrid.wordCount)]))
            return grid.exists ? grid : nil
        }

        /// The geometry of fence `index`'s polygon.
        @inline(__always)
        func polygon(_ index: Int) -> PolygonGeometry {
            let start = recordStart(index)
            return PolygonGeometry(run: UnsafeBufferPointer(rebasing: words[Int(words[start])..<Int(words[start + 1])]))
        }
    }
}
