import Foundation

/// What a polygon's checks read, as one run of numbers: its bounding box, the longitude
/// its vertices are unwrapped against, where each ring ends, and the rings' vertices with
/// the slope of the edge that starts at each (outer ring first, then the holes). `Polygon`
/// keeps its run in an array of its own; `PackedPolygons` keeps a shared set's runs one
/// after another in slot order, so a polygon candidate is one stretch of memory. Both
/// answer through this view, so a fix's answer is computed by the same code, to the bit.
///
/// A run is 8-byte words: 0–3 the box (south, north, west, east), 4 the reference
/// longitude, 5 the ring count r, then r ring ends (in vertices, counted from the first
/// vertex), then the vertices, three words each: unwrapped longitude, latitude, and the
/// inverse slope dx/dy of the edge to the next vertex (0 for a horizontal edge, which
/// never crosses). Each ring's vertices end with its first vertex again, so edge i of a
/// ring joins vertex i to vertex i + 1; 24 bytes an edge.
struct PolygonGeometry {
    /// A box containing the polygon.
    let boundingBox: BoundingBox
    /// The longitude every vertex and queried point is unwrapped against.
    let referenceLongitude: Double
    /// The ring ends, in vertices (outer ring first).
    private let ringEnds: UnsafeBufferPointer<Double>
    /// The vertices, three words each.
    private let vertices: UnsafeBufferPointer<Double>

    /// The words before the ring ends.
    private static let headerWords = 6
    /// The words of one vertex.
    private static let vertexWords = 3

    /// The view of the run that starts at `run`'s first word.
    @inline(__always)
    init(run: UnsafeBufferPointer<Double>) {
        boundingBox = BoundingBox(minLatitude: run[0], maxLatitude: run[1], minLongitude: run[2], maxLongitude: run[3])
        referenceLongitude = run[4]
        let ringCount = Int(run[5])
        let verticesStart = Self.headerWords + ringCount
        ringEnds = UnsafeBufferPointer(rebasing: run[Self.headerWords..<verticesStart])
        let vertexCount = Int(ringEnds[ringCount - 1])
        vertices = UnsafeBufferPointer(rebasing: run[verticesStart..<(verticesStart + Self.vertexWords * vertexCount)])
    }

    /// The run of a polygon with these rings, each given open (its first vertex not
    /// repeated at its end) as unwrapped (longitude, latitude).
    static func run(boundingBox: BoundingBox, referenceLongitude: Double, rings: [[(x: Double, y: Double)]]) -> [Double] {
        var run: [Double] = []
        run.reserveCapacity(headerWords + rings.count + vertexWords * rings.reduce(0) { $0 + $1.count + 1 })
        run += [boundingBox.minLatitude, boundingBox.maxLatitude, boundingBox.minLongitude, boundingBox.maxLongitude]
        run.append(referenceLongitude)
        run.append(Double(rings.count))
        var end = 0
        for ring in rings {
            end += ring.count + 1
            run.append(Double(end))
        }
        for ring in rings {
            for (index, start) in ring.enumerated() {
                let next = ring[(index + 1) % ring.count]
                let dy = next.y - start.y
                run.append(start.x)
                run.append(start.y)
                run.append(dy == 0 ? 0 : (next.x - start.x) / dy)
            }
            run.append(ring[0].x)
            run.append(ring[0].y)
            run.append(0)
        }
        return run
    }

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
        var start = 0
        for (ring, end) in ringEnds.enumerated() {
            let inside = crossingsAreOdd(x: x, y: y, from: start, to: Int(end) - 1)
            if ring == 0 ? !inside : inside { return false }
            start = Int(end)
        }
        return true
    }

    /// Whether a ray from (x, y) towards growing x crosses the edges that start at the
    /// vertices `start..<end` (one ring) an odd number of times: the even-odd rule.
    @inline(__always)
    private func crossingsAreOdd(x: Double, y: Double, from start: Int, to end: Int) -> Bool {
        var inside = false
        var word = start * Self.vertexWords
        for _ in start..<end {
            let x1 = vertices[word]
            let y1 = vertices[word + 1]
            let y2 = vertices[word + 4]
            if (y1 > y) != (y2 > y) && x < x1 + (y - y1) * vertices[word + 2] {
                inside.toggle()
            }
            word += Self.vertexWords
        }
        return inside
    }

    /// See `Region.containment` (a polygon's `size` given).
    func containment(of point: Coordinate, accuracy: Double, hysteresis: Double, size: Double) -> Containment {
        let centreInside = contains(point)
        if centreInside {
            let margin = min(accuracy, size / 2)
            if margin == 0 || boundaryDistance(of: point, isAtLeast: margin) {
                return Containment(relation: .inside)
            }
        } else {
            let margin = hysteresis + accuracy
            if margin == 0 || !boundingBox.expanded(by: margin).contains(point)
                || boundaryDistance(of: point, exceeds: margin) {
                return Containment(relation: .outside)
            }
        }
        return Containment(relation: .uncertain)
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
        guard planar / 6_335_439 <= 30_000 / 6_335_439 else { return nil }
        let bound = Self.relativeBound(planar: planar, cosine: cosine)
        return (planar * (1 - bound) - 1e-6, planar * (1 + bound) + 1e-6)
    }

    /// The relative bound of `planarBracket` for a planar distance `planar` at a latitude
    /// of cosine `cosine`.
    @inline(__always)
    private static func relativeBound(planar: Double, cosine: Double) -> Double {
        let theta = planar / 6_335_439
        let tangentSquared = (1 - cosine * cosine) / (cosine * cosine)
        return (1 + tangentSquared.squareRoot()) * theta + 10 * (1 + tangentSquared) * theta * theta + 1e-9
    }

    /// `planarBracket`'s lower bound for a planar distance `planar` (up to 30 km) at a
    /// latitude of cosine `cosine`: it grows with `planar`, so for a planar distance of
    /// at least `planar` the bracket's lower bound is at least this (see `InteriorDisc`).
    @inline(__always)
    static func lowerBound(planar: Double, cosine: Double) -> Double {
        planar * (1 - relativeBound(planar: planar, cosine: cosine)) - 1e-6
    }

    /// The distance in metres from (x, y) (unwrapped longitude, latitude) to the nearest
    /// edge of any ring in the plane with the given scales (see `InteriorDisc`), or `limit`
    /// when no edge is nearer.
    func planarDistance(
        x: Double, y: Double, metresPerDegreeX: Double, metresPerDegreeY: Double, limit: Double = .infinity
    ) -> Double {
        planarNearest(x: x, y: y, metresPerDegreeX: metresPerDegreeX, metresPerDegreeY: metresPerDegreeY, limit: limit).distance
    }

    /// The nearest point of any ring's edges to (x, y) (unwrapped longitude, latitude) in
    /// the local equirectangular projection with the given scales, and its distance in
    /// metres in that projection (`limit` and (x, y) when no edge is nearer than `limit`).
    ///
    /// An edge whose box is no nearer than the nearest edge so far is skipped without
    /// the division that finds its nearest point: that point, ax + t·dx with t in 0...1
    /// rounded, lies between ax and ax + dx as computed (rounding is monotonic), so its
    /// squared distance as computed is at least the box's, and the strict comparison
    /// would not have taken it. The result is the one every edge gives, to the bit.
    private func planarNearest(
        x: Double, y: Double, metresPerDegreeX: Double, metresPerDegreeY: Double, limit: Double = .infinity
    ) -> (distance: Double, nearest: (x: Double, y: Double)) {
        var best = limit * limit
        var nearest = (x: x, y: y)
        var start = 0
        for end in ringEnds {
            for vertex in start..<(Int(end) - 1) {
                let word = vertex * Self.vertexWords
                let x1 = vertices[word]
                let y1 = vertices[word + 1]
                let x2 = vertices[word + 3]
                let y2 = vertices[word + 4]
                let ax = (x1 - x) * metresPerDegreeX
                let ay = (y1 - y) * metresPerDegreeY
                let dx = (x2 - x1) * metresPerDegreeX
                let dy = (y2 - y1) * metresPerDegreeY
                let gapX = Self.gap(ax, ax + dx)
                let gapY = Self.gap(ay, ay + dy)
                if gapX * gapX + gapY * gapY >= best { continue }
                let lengthSquared = dx * dx + dy * dy
                var t = lengthSquared > 0 ? -(ax * dx + ay * dy) / lengthSquared : 0
                t = min(1, max(0, t))
                let px = ax + t * dx
                let py = ay + t * dy
                let squared = px * px + py * py
                if squared < best {
                    best = squared
                    nearest = (x: x1 + t * (x2 - x1), y: y1 + t * (y2 - y1))
                }
            }
            start = Int(end)
        }
        return (best.squareRoot(), nearest)
    }

    /// How far 0 is from the interval between `a` and `b` (0 when inside it).
    @inline(__always)
    private static func gap(_ a: Double, _ b: Double) -> Double {
        a > 0 && b > 0 ? min(a, b) : a < 0 && b < 0 ? -max(a, b) : 0
    }
}
