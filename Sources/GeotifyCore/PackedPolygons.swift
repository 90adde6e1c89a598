/// The polygons of a shared set laid out for evaluating fixes: their runs (see
/// `PolygonGeometry`: box, reference longitude, ring ends, then vertices and slopes) one
/// after another in one array, in the order they are appended (`SpatialFences` appends
/// them in slot order, and keeps where each run starts in its slot).
///
/// With a million fences a `Polygon` read through its `Fence` is a chain of cache misses
/// (the fence, the polygon's storage, its edge array) and a retain and release of each.
/// Here a polygon candidate is one stretch of memory, found from its slot, beside the
/// polygons near it on the Earth; no reference is touched. The checks are
/// `PolygonGeometry`'s, the code `Polygon` answers with, so the answers are the same.
struct PackedPolygons: Sendable {
    /// Every polygon's run, polygon after polygon.
    private var words: [Double] = []

    /// Room for `polygons` without growing.
    init(capacityFor polygons: some Sequence<Polygon>) {
        words.reserveCapacity(polygons.reduce(0) { $0 + $1.run.count })
    }

    /// Adds `polygon` and returns where its run starts.
    mutating func append(_ polygon: Polygon) -> Int {
        let start = words.count
        words += polygon.run
        return start
    }

    /// Calls `body` with the geometry of the polygon whose run starts at `start` (a value
    /// `append` returned).
    @inline(__always)
    func withGeometry<Result>(at start: Int, _ body: (PolygonGeometry) -> Result) -> Result {
        words.withUnsafeBufferPointer { words in
            body(PolygonGeometry(run: UnsafeBufferPointer(rebasing: words[start...])))
        }
    }
}
