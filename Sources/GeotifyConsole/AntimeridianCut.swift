/// Cuts a polygon that crosses the ±180° meridian into the parts on each side, as
/// GeoJSON (RFC 7946, section 3.1.9) asks, so QGIS or geojson.io draw it where it is and
/// not as a band around the world.
///
/// Rings come as `[lon, lat]` pairs unwrapped against the outer ring's first vertex
/// (longitudes may run past ±180 so that each edge is shorter than 180°). A polygon that
/// stays within ±180 is returned as it is; one that does not is clipped at the meridian
/// (Sutherland–Hodgman against a vertical line) into a west and an east part, each
/// shifted back into range, holes going with the part they fall in. Pure.
package enum AntimeridianCut {
    /// A ring of `[lon, lat]` points, not closed.
    package typealias Ring = [[Double]]

    /// The polygons (each outer ring first, then holes) that `rings` is on the map.
    package static func polygons(_ rings: [Ring]) -> [[Ring]] {
        guard let outer = rings.first, !outer.isEmpty else { return [] }
        let longitudes = rings.joined().map { $0[0] }
        guard let lowest = longitudes.min(), let highest = longitudes.max(), lowest < -180 || highest > 180 else {
            return [rings]
        }
        let shift = lowest < -180 ? 360.0 : 0
        let shifted = rings.map { ring in ring.map { [$0[0] + shift, $0[1]] } }
        var parts: [[Ring]] = []
        for keepWest in [true, false] {
            let clipped = shifted.map { clip($0, keepWest: keepWest) }
            guard let outerPart = clipped.first, hasArea(outerPart) else { continue }
            let back = keepWest ? 0.0 : -360.0
            parts.append(clipped.filter(hasArea).map { ring in ring.map { [$0[0] + back, $0[1]] } })
        }
        return parts
    }

    /// Whether a clipped ring is more than the meridian itself: a ring with an edge on the
    /// meridian leaves the other side only points on it, a part of no width that would
    /// make the shape a MultiPolygon with a sliver. Any other part has a point off the
    /// meridian and the two where its edges cross it.
    static func hasArea(_ ring: Ring) -> Bool {
        ring.count >= 3 && ring.contains { $0[0] != 180 }
    }

    /// The part of `ring` west (x ≤ 180) or east (x ≥ 180) of the meridian.
    static func clip(_ ring: Ring, keepWest: Bool) -> Ring {
        func inside(_ point: [Double]) -> Bool { keepWest ? point[0] <= 180 : point[0] >= 180 }
        var result: Ring = []
        for index in ring.indices {
            let current = ring[index]
            let next = ring[(index + 1) % ring.count]
            if inside(current) { result.append(current) }
            if inside(current) != inside(next), current[0] != next[0] {
                let fraction = (180 - current[0]) / (next[0] - current[0])
                result.append([180, current[1] + fraction * (next[1] - current[1])])
            }
        }
        return result
    }
}
