import Foundation

/// A device's own fences as the evaluator reads them for every fix, in one contiguous
/// run of 8-byte words, so that a fix touches as few cache lines as it can:
///
/// - the device's `BoxGrid` (four words), right after the array's own header, so they
///   share its cache line;
/// - every fence's box on that grid, one word a fence, in the order of the fences: what
///   every fix scans;
/// - where each fence's record starts (and the last one ends), two to a word;
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
/// still takes its share of the memory's bandwidth. A fix reads the grid and boxes (four
/// or five lines with the array's header for 20 fences), then the first line of the
/// record of each fence whose box holds it (three for a polygon: shape, disc and the
/// clearance grid's numbers; then the line of the fix's cell when the disc does not
/// decide, and the edges only when the cell does not either); no `Fence`, polygon
/// storage or identifier, and no reference, so no retain or release either.
struct OwnFenceTable: Sendable {
    /// How many fences.
    let count: Int
    /// The words (see the type's description).
    private let words: [Double]

    /// The words of a cache line, of the grid and of a shape.
    fileprivate static let lineWords = CacheLines.length / MemoryLayout<Double>.stride
    fileprivate static let gridWords = 4
    fileprivate static let shapeWords = 8
    /// The words of a polygon's record after its shape and before its run: its
    /// `InteriorDisc` (a line) and its `ClearanceGrid` (from a line of its own).
    fileprivate static let polygonWords = (1 + (ClearanceGrid.wordCount + lineWords - 1) / lineWords) * lineWords

    init(_ fences: [Fence]) {
        count = fences.count
        let lineWords = OwnFenceTable.lineWords
        let boxesEnd = OwnFenceTable.gridWords + fences.count
        // The record starts: count + 1 of them, two to a word.
        let startsEnd = boxesEnd + (fences.count + 2) / 2
        var lengths: [Int] = []
        for fence in fences {
            var length = OwnFenceTable.shapeWords
            if case .polygon(let polygon) = fence.region { length += OwnFenceTable.polygonWords + polygon.run.count }
            lengths.append((length + lineWords - 1) / lineWords * lineWords)
        }
        // The array never moves once made, so where its cache lines start is found once
        // and the records laid out from there.
        var words = [Double](repeating: 0, count: startsEnd + lineWords - 1 + lengths.reduce(0, +))
        let misalignment = words.withUnsafeBufferPointer { buffer in
            (Int(bitPattern: buffer.baseAddress.map { $0 + startsEnd }) % CacheLines.length) / MemoryLayout<Double>.stride
        }
        var starts = [misalignment == 0 ? startsEnd : startsEnd + lineWords - misalignment]
        for length in lengths { starts.append(starts[starts.count - 1] + length) }
        let grid = BoxGrid(fences.map(\.boundingBox))
        words.replaceSubrange(0..<OwnFenceTable.gridWords, with: [grid.south, grid.west, grid.rowsPerDegree, grid.columnsPerDegree])
        for (index, fence) in fences.enumerated() {
            words[OwnFenceTable.gridWords + index] = Double(bitPattern: grid.box(fence.boundingBox).bits)
        }
        for (index, start) in starts.enumerated() {
            let word = boxesEnd + index / 2
            let bits = words[word].bitPattern | UInt64(start) << (32 * UInt64(index % 2))
            words[word] = Double(bitPattern: bits)
        }
        for (index, fence) in fences.enumerated() {
            let start = starts[index]
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
        self.words = words
    }

    /// Asks for the cache lines of the grid, every box and record start (see
    /// `CacheLines`): what a fix reads first.
    @inline(__always)
    func prefetchBoxes() {
        withView { own in
            let wordCount = OwnFenceTable.gridWords + count + (count + 2) / 2
            CacheLines.prefetch(UnsafeRawPointer(own.words.baseAddress), byteCount: wordCount * MemoryLayout<Double>.stride)
        }
    }

    /// Calls `body` with a view of the table.
    @inline(__always)
    func withView<Result>(_ body: (View) -> Result) -> Result {
        words.withUnsafeBufferPointer { words in body(View(words: words, count: count)) }
    }

    /// The table read in place.
    struct View {
        fileprivate let words: UnsafeBufferPointer<Double>
        /// How many fences.
        let count: Int

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

        /// Where fence `index`'s record starts (for `index` = `count`, where the last ends).
        @inline(__always)
        private func recordStart(_ index: Int) -> Int {
            let bits = words[OwnFenceTable.gridWords + count + index / 2].bitPattern >> (32 * UInt64(index % 2))
            return Int(truncatingIfNeeded: bits & 0xFFFF_FFFF)
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
