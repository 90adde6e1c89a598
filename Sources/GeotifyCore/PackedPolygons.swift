/// The polygons of a shared set laid out for evaluating fixes: each polygon's header (its
/// bounding box, reference longitude and where its edges are) in one array, and the edges
/// of all of them in another, both in the order they are appended (`SpatialFences`
/// appends them in slot order).
///
/// With a million fences a `Polygon` read through its `Fence` is a chain of cache misses
/// (the fence, the polygon's storage, its edge array) and a retain and release of each.
/// Here a polygon candidate reads its header and then its edges, which lie beside those
/// of the polygons near it on the Earth; no reference is touched. The checks are
/// `PolygonGeometry`'s, the code `Polygon` answers with, so the answers are the same.
struct PackedPolygons: Sendable {
    /// Where one polygon's data is.
    private struct Header: Sendable {
        let boundingBox: BoundingBox
        let referenceLongitude: Double
        /// Where its edges start in `edges`.
        let edgeStart: Int
        /// Where its hole ends start in `holeEnds`.
        let holeStart: Int
        /// How many of its edges are the outer ring's.
        let outerEnd: UInt32
        /// How many holes it has.
        let holeCount: UInt32
    }

    private var headers: [Header] = []
    /// Every polygon's edges, polygon after polygon.
    private var edges: [PolygonGeometry.Edge] = []
    /// The end of each hole's edges, counted from its polygon's first edge, polygon after
    /// polygon (only polygons with holes have any).
    private var holeEnds: [UInt32] = []

    /// How many polygons there are.
    var count: Int { headers.count }

    /// Adds `polygon`; it is the one at `count` before the call.
    mutating func append(_ polygon: Polygon) {
        polygon.withGeometry { geometry in
            headers.append(Header(
                boundingBox: geometry.boundingBox, referenceLongitude: geometry.referenceLongitude,
                edgeStart: edges.count, holeStart: holeEnds.count,
                outerEnd: UInt32(geometry.outerEnd), holeCount: UInt32(geometry.holeEnds.count)))
            edges.append(contentsOf: geometry.edges)
            holeEnds.append(contentsOf: geometry.holeEnds)
        }
    }

    /// Calls `body` with the geometry of the polygon at `index` (below `count`).
    @inline(__always)
    func withGeometry<Result>(_ index: Int, _ body: (PolygonGeometry) -> Result) -> Result {
        headers.withUnsafeBufferPointer { headers in
            let header = headers[index]
            return holeEnds.withUnsafeBufferPointer { allHoleEnds in
                let holeEnds = UnsafeBufferPointer(rebasing: allHoleEnds[header.holeStart..<(header.holeStart + Int(header.holeCount))])
                let edgeCount = holeEnds.last.map(Int.init) ?? Int(header.outerEnd)
                return edges.withUnsafeBufferPointer { allEdges in
                    body(PolygonGeometry(
                        boundingBox: header.boundingBox, referenceLongitude: header.referenceLongitude,
                        edges: UnsafeBufferPointer(rebasing: allEdges[header.edgeStart..<(header.edgeStart + edgeCount)]),
                        outerEnd: Int(header.outerEnd), holeEnds: holeEnds))
                }
            }
        }
    }
}
