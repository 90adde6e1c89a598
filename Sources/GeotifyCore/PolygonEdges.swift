/// The check that a polygon's edges never cross or touch, except two neighbouring edges
/// of one ring at the vertex they share. A ring that crosses itself (a bow-tie), touches
/// itself (a figure eight), doubles back along itself (a spike), or a hole that crosses
/// the outer ring or another hole has no single inside: which side of such an edge is
/// "in" depends on the rule a program picks, so Geotify refuses it instead of guessing.
///
/// It sweeps the edges in order of their smallest longitude, keeping the edges whose
/// longitude range the sweep is within ("active"), and tests each new edge against
/// those whose latitude range overlaps too. That costs O(n log n + n·k) for n edges
/// where k is how many edges a meridian crosses at most: a few dozen for real
/// boundaries, whatever their size. A pathological ring with thousands of edges that
/// all span the same longitudes (a fine sawtooth) would make it quadratic, so the pairs
/// looked at are bounded by `maximumWork`, beyond which the polygon is refused as too
/// complex to check rather than checked for seconds.
struct PolygonEdges {
    /// One edge in the unwrapped (longitude, latitude) plane, and where it comes from.
    struct Edge {
        var start: (x: Double, y: Double)
        var end: (x: Double, y: Double)
        /// The ring it belongs to, and its position in that ring's list of edges.
        var ring: PolygonError.Ring
        var position: Int
        /// How many edges its ring has, to tell neighbours (the last and the first are).
        var ringCount: Int
        /// The indices, in the ring as given, of its start and end vertices.
        var from: Int
        var to: Int

        /// How messages name it.
        var name: PolygonError.Edge { PolygonError.Edge(ring: ring, from: from, to: to) }
        var minX: Double { min(start.x, end.x) }
        var maxX: Double { max(start.x, end.x) }
        var minY: Double { min(start.y, end.y) }
        var maxY: Double { max(start.y, end.y) }
    }

    /// How many edge pairs (and active-list entries) the sweep may look at: some tens
    /// of milliseconds of work.
    static let maximumWork = 20_000_000

    /// Refuses the first pair of edges that cross, touch, or overlap, with where; or a
    /// polygon too complex to check within `maximumWork`. `wrap` turns an unwrapped
    /// longitude back into -180...180 for the message.
    static func check(_ edges: [Edge], wrap: (Double) -> Double) throws(PolygonError) {
        let order = edges.indices.sorted { edges[$0].minX < edges[$1].minX }
        var active: [Int] = []
        var work = 0
        for index in order {
            let edge = edges[index]
            active.removeAll { edges[$0].maxX < edge.minX }
            work += active.count + 1
            guard work <= maximumWork else { throw .tooComplex(edges: edges.count) }
            for other in active {
                let candidate = edges[other]
                guard candidate.maxY >= edge.minY && candidate.minY <= edge.maxY else { continue }
                if let point = meeting(candidate, edge) {
                    let (first, second) = candidate.ring == edge.ring && candidate.position < edge.position
                        || rank(candidate.ring) < rank(edge.ring) ? (candidate, edge) : (edge, candidate)
                    throw .edgesIntersect(
                        first.name, second.name, at: Coordinate(latitude: point.y, longitude: wrap(point.x)))
                }
            }
            active.append(index)
        }
    }

    /// The ring's rank for ordering a message: the outer ring first, then the holes.
    private static func rank(_ ring: PolygonError.Ring) -> Int {
        switch ring {
        case .outer: -1
        case .hole(let index): index
        }
    }

    /// Where `a` and `b` meet in a way a polygon does not allow, or nil: any common
    /// point, unless they are neighbours in one ring, whose shared vertex is allowed as
    /// long as they do not run back along each other.
    private static func meeting(_ a: Edge, _ b: Edge) -> (x: Double, y: Double)? {
        if a.ring == b.ring {
            let gap = abs(a.position - b.position)
            if gap == 1 || gap == a.ringCount - 1 {
                return doublingBack(a, b)
            }
        }
        let d1 = orientation(b.start, b.end, a.start)
        let d2 = orientation(b.start, b.end, a.end)
        let d3 = orientation(a.start, a.end, b.start)
        let d4 = orientation(a.start, a.end, b.end)
        if (d1 > 0 && d2 < 0 || d1 < 0 && d2 > 0) && (d3 > 0 && d4 < 0 || d3 < 0 && d4 > 0) {
            let t = d1 / (d1 - d2)
            return (a.start.x + t * (a.end.x - a.start.x), a.start.y + t * (a.end.y - a.start.y))
        }
        if d1 == 0 && lies(a.start, within: b) { return a.start }
        if d2 == 0 && lies(a.end, within: b) { return a.end }
        if d3 == 0 && lies(b.start, within: a) { return b.start }
        if d4 == 0 && lies(b.end, within: a) { return b.end }
        return nil
    }

    /// For neighbouring edges: the far end of one when it lies on the other (they are
    /// collinear and the ring turns back on itself), else nil.
    private static func doublingBack(_ a: Edge, _ b: Edge) -> (x: Double, y: Double)? {
        let (first, second) = a.end == b.start ? (a, b) : (b, a)
        guard orientation(first.start, first.end, second.end) == 0 else { return nil }
        if lies(second.end, within: first) { return second.end }
        if lies(first.start, within: second) { return first.start }
        return nil
    }

    /// Twice the signed area of the triangle p, q, r: positive when r is left of p→q,
    /// zero when the three lie on one line.
    private static func orientation(_ p: (x: Double, y: Double), _ q: (x: Double, y: Double), _ r: (x: Double, y: Double)) -> Double {
        (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x)
    }

    /// Whether `point`, known to be on the line of `edge`, lies within its extent.
    private static func lies(_ point: (x: Double, y: Double), within edge: Edge) -> Bool {
        point.x >= edge.minX && point.x <= edge.maxX && point.y >= edge.minY && point.y <= edge.maxY
    }
}
