/// A spatial index over the bounding boxes of many fences: given a position, it names
/// the fences whose box contains it, so evaluating a fix against a million shared fences
/// costs a few tree levels and the exact checks of those candidates, not a million box
/// comparisons.
///
/// It is a packed R-tree: the boxes are sorted once along a Hilbert curve through their
/// centres and grouped sixteen to a node, level by level, so children are found by
/// arithmetic instead of pointers. A query scans boxes in single precision, rounded
/// outwards (16 bytes a box, so a node's sixteen children are four cache lines), and
/// checks the exact box of each entry that may hold the position. Building sorts once (a
/// million fences in well under a second) and the index holds about 70 bytes per fence.
///
/// Boxes keep `BoundingBox` semantics exactly: a box that crosses the antimeridian is
/// stored as its two halves, a box that reaches a pole spans all longitudes as
/// `BoundingBox` makes it, and longitudes -180 and 180 name the same meridian. The
/// candidates for a position are precisely the fences whose `boundingBox.contains`
/// it, each named once. Empty boxes are never candidates.
///
/// The index is an immutable value: build it once per fence set and share it between
/// threads. Queries allocate nothing.
public struct FenceIndex: Sendable {
    /// How many fences (boxes) were indexed; candidates are indices below it.
    public let count: Int

    /// The entries (box parts) in tree order, in single precision, with their fences:
    /// what a query scans.
    private let leaves: [Leaf]
    /// The entries' exact boxes, in the same order: read for the leaves that may hold
    /// the position.
    private let entries: [Box]
    /// The boxes of the inner nodes in single precision, the lowest level first.
    private let nodes: [CompactBox]
    /// Where each inner level starts in `nodes`, and one past the last level's end.
    private let levelStarts: [Int]

    /// The children of one node (and the entries of one leaf node).
    private static let fanout = 16

    /// One entry as a query scans it.
    private struct Leaf: Sendable {
        /// The box in single precision, rounded outwards.
        let bounds: CompactBox
        /// The fence the entry belongs to.
        let owner: UInt32
    }

    /// A box that does not cross the antimeridian, in degrees.
    fileprivate struct Box: Sendable {
        var minLatitude: Double
        var maxLatitude: Double
        var minLongitude: Double
        var maxLongitude: Double

        @inline(__always)
        func contains(latitude: Double, longitude: Double) -> Bool {
            latitude >= minLatitude && latitude <= maxLatitude
                && longitude >= minLongitude && longitude <= maxLongitude
        }

        mutating func formUnion(_ other: Box) {
            minLatitude = Swift.min(minLatitude, other.minLatitude)
            maxLatitude = Swift.max(maxLatitude, other.maxLatitude)
            minLongitude = Swift.min(minLongitude, other.minLongitude)
            maxLongitude = Swift.max(maxLongitude, other.maxLongitude)
        }
    }

    /// Indexes the bounding boxes of `fences`; candidates are positions in this array.
    public init(_ fences: [Fence]) {
        self.init(boxes: fences.map(\.boundingBox))
    }

    /// Indexes `boxes` (longitudes in -180...180); candidates are positions in this
    /// array. At most `UInt32.max` boxes.
    public init(boxes: [BoundingBox]) {
        precondition(boxes.count <= Int(UInt32.max), "a fence index holds at most \(UInt32.max) fences")
        count = boxes.count

        // Each box becomes one or two entries that do not wrap. A box touching one side
        // of the antimeridian also gets a point entry on the other side, because
        // `BoundingBox.contains` treats longitude -180 and 180 as the same meridian.
        var parts: [Box] = []
        var partOwners: [UInt32] = []
        parts.reserveCapacity(boxes.count)
        partOwners.reserveCapacity(boxes.count)
        for (index, box) in boxes.enumerated() where !box.isEmpty {
            let owner = UInt32(index)
            func add(_ west: Double, _ east: Double) {
                parts.append(Box(minLatitude: box.minLatitude, maxLatitude: box.maxLatitude, minLongitude: west, maxLongitude: east))
                partOwners.append(owner)
            }
            if box.crossesAntimeridian {
                add(box.minLongitude, 180)
                add(-180, box.maxLongitude)
            } else {
                add(box.minLongitude, box.maxLongitude)
                if box.maxLongitude == 180 && box.minLongitude > -180 { add(-180, -180) }
                if box.minLongitude == -180 && box.maxLongitude < 180 { add(180, 180) }
            }
        }

        let order = FenceIndex.hilbertOrder(parts)
        entries = order.map { parts[$0] }
        leaves = order.map { Leaf(bounds: CompactBox(parts[$0]), owner: partOwners[$0]) }

        // Inner levels: each node bounds `fanout` consecutive nodes (or entries) below it,
        // up to a single root level of at most `fanout` nodes.
        var nodes: [CompactBox] = []
        nodes.reserveCapacity(entries.count / (FenceIndex.fanout - 1) + 1)
        var levelStarts: [Int] = [0]
        var below = entries
        while below.count > FenceIndex.fanout {
            var level: [Box] = []
            level.reserveCapacity((below.count + FenceIndex.fanout - 1) / FenceIndex.fanout)
            for start in stride(from: 0, to: below.count, by: FenceIndex.fanout) {
                var union = below[start]
                for index in (start + 1)..<min(start + FenceIndex.fanout, below.count) {
                    union.formUnion(below[index])
                }
                level.append(union)
            }
            nodes.append(contentsOf: level.map(CompactBox.init))
            levelStarts.append(nodes.count)
            below = level
        }
        self.nodes = nodes
        self.levelStarts = levelStarts
    }

    /// Calls `body` with the index of every fence whose bounding box contains `point`,
    /// each once, in no particular order. A longitude outside -180...180 is wrapped first,
    /// as `BoundingBox.contains` does; a non-finite position has no candidates.
    public func forEachCandidate(containing point: Coordinate, _ body: (Int) -> Void) {
        search(latitude: point.latitude, longitude: Coordinate.wrappedLongitude(point.longitude), exact: true, body)
    }

    /// Calls `body` with the index of every fence whose bounding box contains `point`
    /// (as `forEachCandidate`), and perhaps of a few fences whose box only comes within
    /// single-precision rounding of it: without reading the exact boxes, for a caller
    /// whose own checks reject a position outside a fence's box anyway.
    package func forEachPossibleCandidate(containing point: Coordinate, _ body: (Int) -> Void) {
        search(latitude: point.latitude, longitude: Coordinate.wrappedLongitude(point.longitude), exact: false, body)
    }

    private func search(latitude: Double, longitude: Double, exact: Bool, _ body: (Int) -> Void) {
        guard !entries.isEmpty else { return }
        let top = levelStarts.count - 1
        let topCount = top == 0 ? entries.count : levelStarts[top] - levelStarts[top - 1]
        leaves.withUnsafeBufferPointer { leaves in
            entries.withUnsafeBufferPointer { entries in
                nodes.withUnsafeBufferPointer { nodes in
                    levelStarts.withUnsafeBufferPointer { levelStarts in
                        let search = Search(
                            leaves: leaves, entries: entries, nodes: nodes, levelStarts: levelStarts,
                            latitude: latitude, longitude: longitude, exact: exact)
                        search.visit(level: top, first: 0, end: topCount, body)
                    }
                }
            }
        }
    }

    /// Replaces the contents of `candidates` with the indices of the fences whose
    /// bounding box contains `point` (see `forEachCandidate`). Reusing one array keeps
    /// queries free of allocations once it has grown to the largest answer.
    public func candidates(containing point: Coordinate, into candidates: inout [Int]) {
        candidates.removeAll(keepingCapacity: true)
        forEachCandidate(containing: point) { candidates.append($0) }
    }

    /// The same tree with its fences renumbered in the order the tree holds them (each by
    /// its first entry), and for each new number the index it had. A query walks the
    /// tree in the same order as before, so it names the same fences in the same order,
    /// under their new numbers; fences with an empty box are not in the tree and get none.
    /// Data laid out by the new numbers is in the tree's order along its Hilbert curve,
    /// so the candidates of a position are a few neighbouring records.
    package func numberedInTreeOrder() -> (index: FenceIndex, fences: [Int]) {
        var numbers = [UInt32](repeating: .max, count: count)
        var fences: [Int] = []
        fences.reserveCapacity(count)
        let renumbered = leaves.map { leaf in
            if numbers[Int(leaf.owner)] == .max {
                numbers[Int(leaf.owner)] = UInt32(fences.count)
                fences.append(Int(leaf.owner))
            }
            return Leaf(bounds: leaf.bounds, owner: numbers[Int(leaf.owner)])
        }
        return (FenceIndex(count: fences.count, leaves: renumbered, entries: entries, nodes: nodes, levelStarts: levelStarts), fences)
    }

    private init(count: Int, leaves: [Leaf], entries: [Box], nodes: [CompactBox], levelStarts: [Int]) {
        self.count = count
        self.leaves = leaves
        self.entries = entries
        self.nodes = nodes
        self.levelStarts = levelStarts
    }

    /// One query's walk down the tree over borrowed storage.
    private struct Search {
        let leaves: UnsafeBufferPointer<Leaf>
        let entries: UnsafeBufferPointer<Box>
        let nodes: UnsafeBufferPointer<CompactBox>
        let levelStarts: UnsafeBufferPointer<Int>
        let latitude: Double
        let longitude: Double
        /// The position rounded to single precision, for the compact bounds.
        let roundedLatitude: Float
        let roundedLongitude: Float
        /// Whether a leaf's match is checked against the entry's exact box.
        let exact: Bool

        init(
            leaves: UnsafeBufferPointer<Leaf>, entries: UnsafeBufferPointer<Box>, nodes: UnsafeBufferPointer<CompactBox>,
            levelStarts: UnsafeBufferPointer<Int>, latitude: Double, longitude: Double, exact: Bool
        ) {
            self.leaves = leaves
            self.entries = entries
            self.nodes = nodes
            self.levelStarts = levelStarts
            self.latitude = latitude
            self.longitude = longitude
            roundedLatitude = Float(latitude)
            roundedLongitude = Float(longitude)
            self.exact = exact
        }

        /// Visits the nodes `first..<end` of inner `level` (level 0: the entries).
        func visit(level: Int, first: Int, end: Int, _ body: (Int) -> Void) {
            if level == 0 {
                for index in first..<end where leaves[index].bounds.contains(latitude: roundedLatitude, longitude: roundedLongitude) {
                    if !exact || entries[index].contains(latitude: latitude, longitude: longitude) {
                        body(Int(leaves[index].owner))
                    }
                }
                return
            }
            let base = levelStarts[level - 1]
            let belowCount = level == 1 ? entries.count : base - levelStarts[level - 2]
            for index in first..<end where nodes[base + index].contains(latitude: roundedLatitude, longitude: roundedLongitude) {
                let childStart = index * FenceIndex.fanout
                visit(level: level - 1, first: childStart, end: min(childStart + FenceIndex.fanout, belowCount), body)
            }
        }
    }

    /// The permutation of `boxes` that sorts their centres along a Hilbert curve over
    /// latitude and longitude, so boxes near each other on the Earth are near each other
    /// in the array and every run of `fanout` makes a compact node.
    private static func hilbertOrder(_ boxes: [Box]) -> [Int] {
        guard boxes.count > 1 else { return Array(boxes.indices) }
        // One sortable word per box: the curve position in the high bits, the box's index
        // in the low bits.
        let indexBits = Int.bitWidth - (boxes.count - 1).leadingZeroBitCount
        let bitsPerAxis = min(24, (UInt64.bitWidth - indexBits) / 2)
        let side = Double(UInt64(1) << bitsPerAxis)
        let maximum = UInt64(1) << bitsPerAxis - 1
        var keys = [UInt64](repeating: 0, count: boxes.count)
        for (index, box) in boxes.enumerated() {
            let x = (box.minLongitude + box.maxLongitude) / 2
            let y = (box.minLatitude + box.maxLatitude) / 2
            let column = UInt64(max(0, min(side - 1, (x + 180) / 360 * side)))
            let row = UInt64(max(0, min(side - 1, (y + 90) / 180 * side)))
            let distance = hilbertDistance(x: min(column, maximum), y: min(row, maximum), bits: bitsPerAxis)
            keys[index] = distance << indexBits | UInt64(index)
        }
        keys.sort()
        let mask = UInt64(1) << indexBits - 1
        return keys.map { Int($0 & mask) }
    }

    /// The position of cell (`x`, `y`) along the Hilbert curve that fills a square of
    /// 2^`bits` cells a side.
    private static func hilbertDistance(x: UInt64, y: UInt64, bits: Int) -> UInt64 {
        var x = x
        var y = y
        var distance: UInt64 = 0
        var half = UInt64(1) << (bits - 1)
        while half > 0 {
            let rx: UInt64 = x & half != 0 ? 1 : 0
            let ry: UInt64 = y & half != 0 ? 1 : 0
            distance += half * half * ((3 * rx) ^ ry)
            if ry == 0 {
                if rx == 1 {
                    x = half &* 2 &- 1 &- x
                    y = half &* 2 &- 1 &- y
                }
                swap(&x, &y)
            }
            half >>= 1
        }
        return distance
    }
}

private extension CompactBox {
    /// The box of an index entry (one that does not cross the antimeridian) in single
    /// precision, rounded outwards.
    init(_ box: FenceIndex.Box) {
        self.init(BoundingBox(
            minLatitude: box.minLatitude, maxLatitude: box.maxLatitude,
            minLongitude: box.minLongitude, maxLongitude: box.maxLongitude))
    }

    /// Whether a position rounded to single precision is in the box, compared as the
    /// index stores it (no wrapping: its entries do not cross the antimeridian). True for
    /// every position of the exact box it was made from, since rounding is monotonic.
    @inline(__always)
    func contains(latitude: Float, longitude: Float) -> Bool {
        latitude >= minLatitude && latitude <= maxLatitude && longitude >= minLongitude && longitude <= maxLongitude
    }
}
