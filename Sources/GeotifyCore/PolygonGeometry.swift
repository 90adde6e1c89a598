import Foundation

/// What a polygon's checks read, over borrowed storage: its bounding box, the longitude
/// its vertices are unwrapped against, and its edges ring by ring (outer ring first, then
/// the holes). `Polygon` answers its containment and distance questions through it from
/// its own arrays, and `PackedPolygons` from a shared set's polygons packed in slot order,
/// so a fix's answer is computed by the same code from either, to the bit.
struct PolygonGeometry {
    /// One edge in the unwrapped (longitude, latitude) plane.
    struct Edge: Sendable {
        var x1: Double
        var y1: Double
        var x2: Double
        var y2: Double
        /// dx/dy, for the crossing test (0 for horizontal edges, which never cross).
        var inverseSlope: Double

        /// The edge from `start` to `end`.
        init(from start: (x: Double, y: Double), to end: (x: Double, y: Double)) {
            let dy = end.y - start.y
            x1 = start.x
            y1 = start.y
            x2 = end.x
            y2 = end.y
            inverseSlope = dy == 0 ? 0 : (end.x - start.x) / dy
        }
    }

    /// A box containing the polygon.
    let boundingBox: BoundingBox
    /// The longitude every vertex and queried point is unwrapped against.
    let referenceLongitude: Double
    /// The edges of all rings: the outer ring's, then each hole's.
    let edges: UnsafeBufferPointer<Edge>
    /// How many of `edges` are the outer ring's.
    let outerEnd: Int
    /// Where each hole's edges end in `edges` (empty without holes).
    let holeEnds: UnsafeBufferPointer<UInt32>

    /// The longitude moved by whole turns to within 180° of the reference.
    static func unwrap(_ longitude: Double, against reference: Double) -> Double {
        var offset = longitude - reference
        if offset > 180 {
            offset -= 360
        } else if offset < -180 {
            offset += 360
        }
        return reference + Coordinate.wrappedLongitude(offset)
    }

    /// See `Polygon.contains`.
    func contains(_ c: Coordinate) -> Bool {
        guard boundingBox.contains(c) else { return false }
        let x = Self.unwrap(c.longitude, against: referenceLongitude)
        let y = c.latitude
        guard crossingsAreOdd(x: x, y: y, from: 0, to: outerEnd) else { return false }
        var start = outerEnd
        for end in holeEnds {
            if crossingsAreOdd(x: x, y: y, from: start, to: Int(end)) { return false }
            start = Int(end)
        }
        return true
    }

    /// Whether a ray from (x, y) towards growing x crosses the edges `start..<end` (one
    /// ring) an odd number of times: the even-odd rule.
    @inline(__always)
    private func crossingsAreOdd(x: Double, y: Double, from start: Int, to end: Int) -> Bool {
        var inside = false
        for index in start..<end {
            let edge = edges[index]
            if (edge.y1 > y) != (edge.y2 > y) && x < edge.x1 + (y - edge.y1) * edge.inverseSlope {
                inside.toggle()
            }
        }
        return inside
    }

    /// See `Region.containment` (a polygon's `size` given).
    func containment(of point: Coordinate, accuracy: Double, hysteresis: Double, size: Double) -> Containment {
        let centreInside = contains(point)
        if centreInside {
            let margin = min(accuracy, size / 2)
            if margin == 0 || boundaryDistance(of: point, isAtLeast: margin) {
                return Containment(relation: .inside, centreInside: true)
            }
        } else {
            let margin = hysteresis + accuracy
            if margin == 0 || !boundingBox.expanded(by: margin).contains(point)
                || boundaryDistance(of: point, exceeds: margin) {
                return Containment(relation: .outside, centreInside: false)
            }
        }
        return Containment(relation: .uncertain, centreInside: centreInside)
    }

    /// See `Polygon.distanceToBoundary`.
    func distanceToBoundary(_ c: Coordinate) -> Double {
        let x = Self.unwrap(c.longitude, against: referenceLongitude)
        let y = min(90, max(-90, c.latitude))
        let radiansPerDegree = Double.pi / 180
        let (_, nearest) = planarNearest(
            x: x, y: y, metresPerDegreeX: Geodesy.parallelRadius(atLatitude: y) * radiansPerDegree,
            metresPerDegreeY: Geodesy.meridionalRadius(atLatitude: y) * radiansPerDegree)
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

    /// See `Polygon.boundaryDistance(of:isAtLeast:)`.
    func boundaryDistance(of c: Coordinate, isAtLeast margin: Double) -> Bool {
        if let bracket = planarBracket(c) {
            if bracket.lower >= margin { return true }
            if bracket.upper < margin { return false }
        }
        return distanceToBoundary(c) >= margin
    }

    /// See `Polygon.boundaryDistance(of:exceeds:)`.
    func boundaryDistance(of c: Coordinate, exceeds margin: Double) -> Bool {
        if let bracket = planarBracket(c) {
            if bracket.lower > margin { return true }
            if bracket.upper <= margin { return false }
        }
        return distanceToBoundary(c) > margin
    }

    /// See `Polygon.planarBracket`.
    func planarBracket(_ c: Coordinate) -> (lower: Double, upper: Double)? {
        let y = c.latitude
        guard abs(y) <= 80 else { return nil }
        let radiansPerDegree = Double.pi / 180
        let cosine = cos(y * radiansPerDegree)
        let (planar, _) = planarNearest(
            x: Self.unwrap(c.longitude, against: referenceLongitude), y: y,
            metresPerDegreeX: Geodesy.parallelRadius(cosineOfLatitude: cosine) * radiansPerDegree,
            metresPerDegreeY: Geodesy.meridionalRadius(cosineOfLatitude: cosine) * radiansPerDegree)
        let theta = planar / 6_335_439
        guard theta <= 30_000 / 6_335_439 else { return nil }
        let tangentSquared = (1 - cosine * cosine) / (cosine * cosine)
        let bound = (1 + tangentSquared.squareRoot()) * theta + 10 * (1 + tangentSquared) * theta * theta + 1e-9
        return (planar * (1 - bound) - 1e-6, planar * (1 + bound) + 1e-6)
    }

    /// The nearest point of any ring's edges to (x, y) (unwrapped longitude, latitude) in
    /// the local equirectangular projection with the given scales, and its distance in
    /// metres in that projection.
    private func planarNearest(
        x: Double, y: Double, metresPerDegreeX: Double, metresPerDegreeY: Double
    ) -> (distance: Double, nearest: (x: Double, y: Double)) {
        var best = Double.infinity
        var nearest = (x: x, y: y)
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
        return (best.squareRoot(), nearest)
    }
}
