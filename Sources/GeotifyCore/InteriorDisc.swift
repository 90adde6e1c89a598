import Foundation

/// A disc inside a polygon, clear of every edge by its radius, that decides "inside by
/// at least the margin" for a fix deep inside the polygon without reading its edges.
///
/// The polygon's checks (`PolygonGeometry.containment`) measure a fix's distance to the
/// boundary in the local plane at the fix's latitude (metres per degree from the radii of
/// curvature there), and prove "at least the margin" with `planarBracket`. The disc lives
/// in one fixed plane whose scales are the smallest those take anywhere in the polygon's
/// box (`metresPerDegreeX` at the latitude farthest from the equator, `metresPerDegreeY`
/// at the nearest), so its distances never exceed the local ones: a point at distance d
/// from the centre is at least `radius` − d from every edge in the local plane too. When
/// that clearance alone proves the bracket's lower bound reaches the margin, and is far
/// above the rounding of the ray-crossing test (0.1 m against nanometres), the fix is
/// inside with confidence, exactly as the edges would have said; otherwise the edges
/// decide as before. The radius is rounded down (1e-9 relative and 1 µm) and the
/// clearance likewise, so every rounding errs towards asking the edges.
///
/// Only for polygons whose box lies within ±80° of latitude and spans at most 25 km,
/// where the bracket is proven and a fix inside is always within its 30 km.
struct InteriorDisc {
    /// The centre: unwrapped longitude and latitude, in degrees.
    let x: Double
    let y: Double
    /// The clearance of the centre from every edge, in metres of the fixed plane.
    let radius: Double
    /// The fixed plane's metres per degree of longitude and latitude.
    let metresPerDegreeX: Double
    let metresPerDegreeY: Double
    /// The polygon's reference longitude (`PolygonGeometry.referenceLongitude`).
    let referenceLongitude: Double

    /// The clearance below which the disc decides nothing: far above any rounding of the
    /// ray-crossing test, so a fix that clear of every edge is inside for that test too.
    static let minimumClearance = 0.1

    /// The fixed plane of `polygon`'s box: metres per degree of longitude and latitude, the
    /// smallest the local planes take anywhere in the box (shaved by 1e-9 relative), and
    /// the box's longitude span; nil when the box reaches beyond ±80° or its diagonal
    /// exceeds 25 km (so the bracket might open for a point in it).
    static func fixedPlane(of polygon: PolygonGeometry) -> (scaleX: Double, scaleY: Double, span: Double)? {
        let box = polygon.boundingBox
        guard box.minLatitude >= -80, box.maxLatitude <= 80 else { return nil }
        let radiansPerDegree = Double.pi / 180
        let farthest = max(abs(box.minLatitude), abs(box.maxLatitude))
        let nearest = box.minLatitude <= 0 && box.maxLatitude >= 0 ? 0 : min(abs(box.minLatitude), abs(box.maxLatitude))
        let farCosine = cos(farthest * radiansPerDegree)
        let nearCosine = cos(nearest * radiansPerDegree)
        let scaleX = Geodesy.parallelRadius(cosineOfLatitude: farCosine) * radiansPerDegree * (1 - 1e-9)
        let scaleY = Geodesy.meridionalRadius(cosineOfLatitude: nearCosine) * radiansPerDegree * (1 - 1e-9)
        // The box's diagonal in the largest scales bounds the distance from any point of
        // the box to any edge.
        var span = box.maxLongitude - box.minLongitude
        if span < 0 { span += 360 }
        let width = span * Geodesy.parallelRadius(cosineOfLatitude: nearCosine) * radiansPerDegree
        let height = (box.maxLatitude - box.minLatitude) * Geodesy.meridionalRadius(cosineOfLatitude: farCosine) * radiansPerDegree
        guard (width * width + height * height).squareRoot() <= 25_000 else { return nil }
        return (scaleX, scaleY, span)
    }

    /// The disc of `polygon`, nil when the polygon is outside the range the bracket is
    /// proven for or no candidate centre lies inside it clear of the edges.
    init?(_ polygon: PolygonGeometry, center: Coordinate) {
        guard let (scaleX, scaleY, span) = InteriorDisc.fixedPlane(of: polygon) else { return nil }
        let box = polygon.boundingBox
        let west = PolygonGeometry.unwrap(box.minLongitude, against: polygon.referenceLongitude)
        var candidates = [(x: PolygonGeometry.unwrap(center.longitude, against: polygon.referenceLongitude), y: center.latitude)]
        let steps = 4
        for column in 1..<steps {
            for row in 1..<steps {
                candidates.append((
                    x: west + span * Double(column) / Double(steps),
                    y: box.minLatitude + (box.maxLatitude - box.minLatitude) * Double(row) / Double(steps)))
            }
        }
        var best: (x: Double, y: Double, clearance: Double)?
        for candidate in candidates {
            let point = Coordinate(latitude: candidate.y, longitude: Coordinate.wrappedLongitude(candidate.x))
            guard polygon.contains(point) else { continue }
            let clearance = polygon.planarDistance(
                x: candidate.x, y: candidate.y, metresPerDegreeX: scaleX, metresPerDegreeY: scaleY)
            if clearance > best?.clearance ?? 0 { best = (candidate.x, candidate.y, clearance) }
        }
        guard let best else { return nil }
        x = best.x
        y = best.y
        radius = best.clearance * (1 - 1e-9) - 1e-6
        guard radius > InteriorDisc.minimumClearance else { return nil }
        metresPerDegreeX = scaleX
        metresPerDegreeY = scaleY
        referenceLongitude = polygon.referenceLongitude
    }

    /// The disc stored as `words` (see `words`).
    init(words: UnsafeBufferPointer<Double>) {
        x = words[0]
        y = words[1]
        radius = words[2]
        metresPerDegreeX = words[3]
        metresPerDegreeY = words[4]
        referenceLongitude = words[5]
    }

    /// The words that store the disc.
    var words: [Double] { [x, y, radius, metresPerDegreeX, metresPerDegreeY, referenceLongitude] }

    /// How many words `words` has.
    static let wordCount = 6

    /// Whether `point` is inside the polygon with `distanceToBoundary` of at least
    /// `margin` as `PolygonGeometry.containment` proves it (ray crossing, then the planar
    /// bracket's lower bound), from the disc alone; false when the edges must decide.
    /// `cosine` is cos(latitude · (π/180)) of the point, as `planarBracket` computes it.
    @inline(__always)
    func holdsInside(_ point: Coordinate, cosine: Double, margin: Double) -> Bool {
        let dx = (PolygonGeometry.unwrap(point.longitude, against: referenceLongitude) - x) * metresPerDegreeX
        let dy = (point.latitude - y) * metresPerDegreeY
        let clearance = radius - (dx * dx + dy * dy).squareRoot() * (1 + 1e-9) - 2e-6
        guard clearance >= InteriorDisc.minimumClearance else { return false }
        return margin == 0 || PolygonGeometry.lowerBound(planar: clearance, cosine: cosine) >= margin + 1e-6
    }
}
