import Foundation

/// A polygon fence area: an outer ring and optional holes, GeoJSON-style, with vertices as
/// `Coordinate`s.
///
/// Edges are straight lines in (longitude, latitude) after unwrapping longitudes relative to
/// the first vertex of the outer ring, so rings that cross the ±180° meridian work; a ring
/// may not span more than 180° of longitude (so a ring cannot enclose a pole). Rings may be
/// given closed (first == last) or open, and a vertex repeated right after itself counts
/// once. Edges may not cross or touch, except neighbouring edges at their shared vertex
/// (`PolygonEdges`): a bow-tie or a hole crossing the outer ring has no single inside, so
/// it is refused. Everything the checks need is precomputed at construction.
public struct Polygon: Sendable, Hashable {
    /// The outer ring as given.
    public var outer: [Coordinate] { storage.outer }
    /// The holes as given.
    public var holes: [[Coordinate]] { storage.holes }
    /// A box containing the outer ring (and so the polygon), for cheap rejection.
    public var boundingBox: BoundingBox { storage.boundingBox }
    /// A representative point for display: the average of the outer ring's vertices after
    /// unwrapping, longitude wrapped back to -180...180.
    public var center: Coordinate { storage.center }

    /// Everything above and below in one immutable object: copying a polygon (as reading
    /// a fence's region does) retains one reference, and a check reads that object and
    /// its run, not the rings as given (which only display and equality need).
    private let storage: Storage

    /// The polygon's data (see `storage`).
    private final class Storage: Sendable {
        let outer: [Coordinate]
        let holes: [[Coordinate]]
        let boundingBox: BoundingBox
        let center: Coordinate
        /// What the checks read (see `PolygonGeometry`).
        let run: [Double]

        init(outer: [Coordinate], holes: [[Coordinate]], boundingBox: BoundingBox, center: Coordinate, run: [Double]) {
            self.outer = outer
            self.holes = holes
            self.boundingBox = boundingBox
            self.center = center
            self.run = run
        }
    }

    /// Validates the rings and precomputes what containment and distance checks need.
    ///
    /// Throws when a ring has fewer than 3 distinct vertices, a vertex is out of range,
    /// a ring spans more than 180° of longitude, a ring's vertices are collinear, or two
    /// edges cross or touch (within a ring or between rings). Holes are unwrapped against
    /// the outer ring's first vertex too; a hole wholly outside the outer ring is not
    /// refused (it simply removes nothing).
    public init(outer: [Coordinate], holes: [[Coordinate]] = []) throws(PolygonError) {
        let referenceLongitude = outer.first.map { Coordinate.wrappedLongitude($0.longitude) } ?? 0
        var rings: [[(x: Double, y: Double)]] = []
        var checked: [PolygonEdges.Edge] = []
        for (ringIndex, ring) in ([outer] + holes).enumerated() {
            let name: PolygonError.Ring = ringIndex == 0 ? .outer : .hole(ringIndex - 1)
            let (points, given) = try Self.unwrappedRing(ring, name: name, referenceLongitude: referenceLongitude)
            rings.append(points)
            for index in points.indices {
                let next = (index + 1) % points.count
                checked.append(PolygonEdges.Edge(
                    start: points[index], end: points[next], ring: name, position: index, ringCount: points.count,
                    from: given[index], to: given[next]))
            }
        }
        try PolygonEdges.check(checked, wrap: Coordinate.wrappedLongitude)

        let outerPoints = rings[0]
        let xs = outerPoints.map(\.x)
        let ys = outerPoints.map(\.y)
        let count = Double(outerPoints.count)
        let boundingBox = BoundingBox(
            minLatitude: ys.min() ?? 0, maxLatitude: ys.max() ?? 0,
            minLongitude: Coordinate.wrappedLongitude(xs.min() ?? 0),
            maxLongitude: Coordinate.wrappedLongitude(xs.max() ?? 0))
        storage = Storage(
            outer: outer, holes: holes, boundingBox: boundingBox,
            center: Coordinate(
                latitude: ys.reduce(0, +) / count,
                longitude: Coordinate.wrappedLongitude(xs.reduce(0, +) / count)),
            run: PolygonGeometry.run(boundingBox: boundingBox, referenceLongitude: referenceLongitude, rings: rings))
    }

    /// Validates one ring and returns its open list of vertices as (unwrapped longitude,
    /// latitude), a vertex repeated right after itself dropped, with the index of each in
    /// the ring as given.
    private static func unwrappedRing(
        _ ring: [Coordinate], name: PolygonError.Ring, referenceLongitude: Double
    ) throws(PolygonError) -> (points: [(x: Double, y: Double)], given: [Int]) {
        for (index, vertex) in ring.enumerated() where !vertex.isValid {
            throw .vertexOutOfRange(ring: name, index: index, vertex: vertex)
        }
        var vertices = ring
        if vertices.count > 1 && vertices.first == vertices.last { vertices.removeLast() }
        let distinct = Set(vertices).count
        guard distinct >= 3 else { throw .tooFewVertices(ring: name, distinct: distinct) }

        var points: [(x: Double, y: Double)] = []
        var given: [Int] = []
        for (index, vertex) in vertices.enumerated() where index == 0 || vertex != vertices[index - 1] {
            points.append((x: PolygonGeometry.unwrap(vertex.longitude, against: referenceLongitude), y: vertex.latitude))
            given.append(index)
        }
        if points.count > 1 && vertices.last == vertices.first {
            points.removeLast()
            given.removeLast()
        }
        let xs = points.map(\.x)
        let span = (xs.max() ?? 0) - (xs.min() ?? 0)
        guard span <= 180 else { throw .longitudeSpanTooWide(ring: name, span: span) }

        // Collinear when every vertex lies on the line through the first and the one
        // farthest from it; a ring that is not, yet has no area (a symmetric bow-tie),
        // is refused later for its crossing edges.
        let first = points[0]
        let far = points.max { hypot($0.x - first.x, $0.y - first.y) < hypot($1.x - first.x, $1.y - first.y) } ?? first
        let collinear = points.allSatisfy { ($0.x - first.x) * (far.y - first.y) - ($0.y - first.y) * (far.x - first.x) == 0 }
        guard !collinear else { throw .zeroArea(ring: name) }
        return (points, given)
    }

    /// Whether the position is inside the outer ring and not inside any hole (even-odd rule
    /// per ring), handling the antimeridian. Points exactly on an edge may go either way:
    /// callers that care combine this with `distanceToBoundary`.
    public func contains(_ c: Coordinate) -> Bool {
        withGeometry { $0.contains(c) }
    }

    /// `Region.containment` for this polygon, given its `size`.
    public func containment(of point: Coordinate, accuracy: Double, hysteresis: Double, size: Double) -> Containment {
        withGeometry { $0.containment(of: point, accuracy: accuracy, hysteresis: hysteresis, size: size) }
    }

    /// Approximate distance in metres from the position to the nearest edge of any ring.
    ///
    /// The nearest edge point is found in a local equirectangular projection scaled by the
    /// radii of curvature at the position; the distance to it is then the great-circle
    /// distance corrected to the ellipsoid with the radii at the mid-latitude. Good to about
    /// 0.5 % for boundary points up to ~100 km away (within a pole's cap the error grows
    /// with the longitude span of the edges: about 0.4 % for 10° at 89.5°); for accuracy
    /// and hysteresis decisions, not for surveying. It does not say on which side the
    /// position is: combine with `contains`.
    public func distanceToBoundary(_ c: Coordinate) -> Double {
        withGeometry { $0.distanceToBoundary(c) }
    }

    /// Whether `distanceToBoundary(c)` is at least `margin` metres.
    public func boundaryDistance(of c: Coordinate, isAtLeast margin: Double) -> Bool {
        withGeometry { $0.boundaryDistance(of: c, isAtLeast: margin) }
    }

    /// Whether `distanceToBoundary(c)` is more than `margin` metres.
    public func boundaryDistance(of c: Coordinate, exceeds margin: Double) -> Bool {
        withGeometry { $0.boundaryDistance(of: c, exceeds: margin) }
    }

    /// Bounds on `distanceToBoundary(c)` from the planar distance alone (no trigonometry:
    /// the radii of curvature come from the cosine of the latitude), nil where the bound
    /// below is not proven (beyond 80° of latitude, or 30 km from the boundary).
    ///
    /// `distanceToBoundary` measures to the nearest point q of the local projection at
    /// the position p's latitude φ, whose planar distance is P = √((M(φ)Δφ)² +
    /// (N(φ)cos φ Δλ)²). It returns the great-circle distance to q scaled by the ratio of
    /// the ellipsoid's to the sphere's lengths at the mid-latitude φₘ = φ + Δφ/2, which
    /// is √((M(φₘ)Δφ)² + (N(φₘ)cos φₘ Δλ)²) up to the spherical equirectangular error.
    /// Against P that differs by: cos φₘ / cos φ = 1 − tan φ · Δφ/2 + O((1 + tan²φ)Δφ²);
    /// M and N change by a relative 3e²|Δφ| and e²|Δφ| at most (e² < 0.0067); the
    /// great circle differs from the mid-latitude equirectangular length by a relative
    /// O((1 + tan²φ)θ²) for an angular distance θ. With |Δφ| ≤ θ = P / M(0), the relative
    /// difference is below (tan|φ|/2 + 0.02)θ + O((1 + tan²φ)θ²); the bound taken is
    /// (1 + tan|φ|)θ + 10(1 + tan²φ)θ² + 1e-9, twice the first-order term and ten times
    /// the second, plus 1 µm for the rounding of coordinate differences (nanometres);
    /// `PolygonPlanarBracketTests` checks it against `distanceToBoundary` at latitudes to
    /// 80° and distances to 30 km.
    func planarBracket(_ c: Coordinate) -> (lower: Double, upper: Double)? {
        withGeometry { $0.planarBracket(c) }
    }

    /// Calls `body` with the polygon's geometry over its own run.
    func withGeometry<Result>(_ body: (PolygonGeometry) -> Result) -> Result {
        storage.run.withUnsafeBufferPointer { body(PolygonGeometry(run: $0)) }
    }

    /// The polygon's run (see `PolygonGeometry`), for packing it with others.
    var run: [Double] { storage.run }

    /// Polygons are equal when their rings are equal as given.
    public static func == (lhs: Polygon, rhs: Polygon) -> Bool {
        lhs.outer == rhs.outer && lhs.holes == rhs.holes
    }

    /// Hashes the rings as given.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(outer)
        hasher.combine(holes)
    }
}
