import Foundation

/// A polygon fence area: an outer ring and optional holes, GeoJSON-style, with vertices as
/// `Coordinate`s.
///
/// Edges are straight lines in (longitude, latitude) after unwrapping longitudes relative to
/// the first vertex of the outer ring, so rings that cross the ±180° meridian work; a ring
/// may not span more than 180° of longitude (so a ring cannot enclose a pole). Rings may be
/// given closed (first == last) or open. Self-intersecting rings are accepted and use the
/// even-odd rule. Everything the checks need is precomputed at construction.
public struct Polygon: Sendable, Hashable {
    /// The outer ring as given.
    public let outer: [Coordinate]
    /// The holes as given.
    public let holes: [[Coordinate]]
    /// A box containing the outer ring (and so the polygon), for cheap rejection.
    public let boundingBox: BoundingBox
    /// A representative point for display: the average of the outer ring's vertices after
    /// unwrapping, longitude wrapped back to -180...180.
    public let center: Coordinate

    /// The longitude every vertex and queried point is unwrapped against.
    private let referenceLongitude: Double
    /// Edges of all rings in the unwrapped plane: outer ring first, then the holes.
    private let edges: [Edge]
    /// End index in `edges` of each ring (outer first).
    private let ringEnds: [Int]

    /// One edge in the unwrapped (longitude, latitude) plane.
    private struct Edge: Sendable {
        var x1: Double
        var y1: Double
        var x2: Double
        var y2: Double
        /// dx/dy, for the crossing test (0 for horizontal edges, which never cross).
        var inverseSlope: Double
    }

    /// Validates the rings and precomputes what containment and distance checks need.
    ///
    /// Throws when a ring has fewer than 3 distinct vertices, a vertex is out of range,
    /// a ring spans more than 180° of longitude, or a ring's vertices are collinear. Holes
    /// are unwrapped against the outer ring's first vertex too; they are not checked to lie
    /// inside the outer ring.
    public init(outer: [Coordinate], holes: [[Coordinate]] = []) throws(PolygonError) {
        let referenceLongitude = outer.first.map { Coordinate.wrappedLongitude($0.longitude) } ?? 0
        var edges: [Edge] = []
        var ringEnds: [Int] = []
        var outerPoints: [(x: Double, y: Double)] = []
        for (ringIndex, ring) in ([outer] + holes).enumerated() {
            let name: PolygonError.Ring = ringIndex == 0 ? .outer : .hole(ringIndex - 1)
            let points = try Self.unwrappedRing(ring, name: name, referenceLongitude: referenceLongitude)
            if ringIndex == 0 { outerPoints = points }
            for index in points.indices {
                let start = points[index]
                let end = points[(index + 1) % points.count]
                let dy = end.y - start.y
                edges.append(Edge(x1: start.x, y1: start.y, x2: end.x, y2: end.y,
                                  inverseSlope: dy == 0 ? 0 : (end.x - start.x) / dy))
            }
            ringEnds.append(edges.count)
        }

        let xs = outerPoints.map(\.x)
        let ys = outerPoints.map(\.y)
        self.outer = outer
        self.holes = holes
        self.referenceLongitude = referenceLongitude
        self.edges = edges
        self.ringEnds = ringEnds
        self.boundingBox = BoundingBox(
            minLatitude: ys.min() ?? 0, maxLatitude: ys.max() ?? 0,
            minLongitude: Coordinate.wrappedLongitude(xs.min() ?? 0),
            maxLongitude: Coordinate.wrappedLongitude(xs.max() ?? 0))
        let count = Double(outerPoints.count)
        self.center = Coordinate(
            latitude: ys.reduce(0, +) / count,
            longitude: Coordinate.wrappedLongitude(xs.reduce(0, +) / count))
    }

    /// Validates one ring and returns its open list of vertices as (unwrapped longitude,
    /// latitude).
    private static func unwrappedRing(
        _ ring: [Coordinate], name: PolygonError.Ring, referenceLongitude: Double
    ) throws(PolygonError) -> [(x: Double, y: Double)] {
        for (index, vertex) in ring.enumerated() where !vertex.isValid {
            throw .vertexOutOfRange(ring: name, index: index, vertex: vertex)
        }
        var vertices = ring
        if vertices.count > 1 && vertices.first == vertices.last { vertices.removeLast() }
        let distinct = Set(vertices).count
        guard distinct >= 3 else { throw .tooFewVertices(ring: name, distinct: distinct) }

        let points = vertices.map { (x: unwrap($0.longitude, against: referenceLongitude), y: $0.latitude) }
        let xs = points.map(\.x)
        let span = (xs.max() ?? 0) - (xs.min() ?? 0)
        guard span <= 180 else { throw .longitudeSpanTooWide(ring: name, span: span) }

        var twiceArea = 0.0
        for index in points.indices {
            let a = points[index]
            let b = points[(index + 1) % points.count]
            twiceArea += (a.x - points[0].x) * (b.y - points[0].y) - (b.x - points[0].x) * (a.y - points[0].y)
        }
        guard twiceArea != 0 else { throw .zeroArea(ring: name) }
        return points
    }

    /// The longitude moved by whole turns to within 180° of the reference.
    private static func unwrap(_ longitude: Double, against reference: Double) -> Double {
        var offset = longitude - reference
        if offset > 180 {
            offset -= 360
        } else if offset < -180 {
            offset += 360
        }
        return reference + Coordinate.wrappedLongitude(offset)
    }

    /// Whether the position is inside the outer ring and not inside any hole (even-odd rule
    /// per ring), handling the antimeridian. Points exactly on an edge may go either way:
    /// callers that care combine this with `distanceToBoundary`.
    public func contains(_ c: Coordinate) -> Bool {
        guard boundingBox.contains(c) else { return false }
        let x = Self.unwrap(c.longitude, against: referenceLongitude)
        let y = c.latitude
        return edges.withUnsafeBufferPointer { edges in
            var start = 0
            for (ringIndex, end) in ringEnds.enumerated() {
                var inside = false
                for index in start..<end {
                    let edge = edges[index]
                    if (edge.y1 > y) != (edge.y2 > y) && x < edge.x1 + (y - edge.y1) * edge.inverseSlope {
                        inside.toggle()
                    }
                }
                if ringIndex == 0 {
                    if !inside { return false }
                } else if inside {
                    return false
                }
                start = end
            }
            return true
        }
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
        let x = Self.unwrap(c.longitude, against: referenceLongitude)
        let y = min(90, max(-90, c.latitude))
        let radiansPerDegree = Double.pi / 180
        let metresPerDegreeY = Geodesy.meridionalRadius(atLatitude: y) * radiansPerDegree
        let metresPerDegreeX = Geodesy.parallelRadius(atLatitude: y) * radiansPerDegree

        var best = Double.infinity
        var nearest = (x: x, y: y)
        edges.withUnsafeBufferPointer { edges in
            for edge in edges {
                let ax = (edge.x1 - x) * metresPerDegreeX
                let ay = (edge.y1 - y) * metresPerDegreeY
                let dx = (edge.x2 - edge.x1) * metresPerDegreeX
                let dy = (edge.y2 - edge.y1) * metresPerDegreeY
                let lengthSquared = dx * dx + dy * dy
                var t = lengthSquared > 0 ? -(ax * dx + ay * dy) / lengthSquared : 0
                t = min(1, max(0, t))
                let px = ax + t * dx
                let py = ay + t * dy
                let squared = px * px + py * py
                if squared < best {
                    best = squared
                    nearest = (x: edge.x1 + t * (edge.x2 - edge.x1), y: edge.y1 + t * (edge.y2 - edge.y1))
                }
            }
        }
        // The great-circle distance to that point (right where meridians converge), scaled
        // from the sphere to the ellipsoid by the ratio of the radii of curvature in its
        // direction at the mid-latitude.
        let spherical = Geodesy.sphericalDistance(
            Coordinate(latitude: y, longitude: x), Coordinate(latitude: nearest.y, longitude: nearest.x))
        let midLatitude = (y + nearest.y) / 2
        let dLatitude = nearest.y - y
        let dLongitude = nearest.x - x
        let north = dLatitude * Geodesy.meridionalRadius(atLatitude: midLatitude)
        let east = dLongitude * Geodesy.parallelRadius(atLatitude: midLatitude)
        let sphereNorth = dLatitude * Geodesy.meanRadius
        let sphereEast = dLongitude * Geodesy.meanRadius * max(0, cos(midLatitude * radiansPerDegree))
        let sphereLength = (sphereNorth * sphereNorth + sphereEast * sphereEast).squareRoot()
        guard sphereLength > 0 else { return spherical }
        return spherical * (north * north + east * east).squareRoot() / sphereLength
    }

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
