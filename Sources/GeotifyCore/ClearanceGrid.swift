/// A polygon's box cut into 16 × 16 cells, each holding how far its centre is from every
/// edge and on which side: a disc around each centre, inside or outside the polygon, that
/// decides "inside by at least the margin" or "outside by more than the margin" for a fix
/// in the cell without reading the polygon's edges (two cache lines instead of a dozen).
///
/// It is `InteriorDisc`'s argument with 256 centres instead of one, for both sides: in the
/// polygon's fixed plane (`InteriorDisc.fixedPlane`, whose scales are the smallest the
/// local planes take anywhere in the box) a point at distance d from a centre of
/// clearance r is at least r − d from every edge in the fix's local plane too. When that
/// is at least 0.1 m, far above the rounding of the ray-crossing test, the fix is on the
/// centre's side of every ring, as the edges would say. And when `PolygonGeometry
/// .lowerBound` of it reaches the margin, so does the planar bracket's lower bound, which
/// then decides `PolygonGeometry.containment` as the cell does: `boundaryDistance(of:
/// isAtLeast:)` inside, `boundaryDistance(of:exceeds:)` outside (or, before it, a margin
/// of 0 or a fix beyond the expanded box: outside all the same). The bracket never opens
/// for a fix in the box: the box lies within ±80° and its diagonal within 25 km.
///
/// A cell stores its centre's clearance as a signed byte, in units of 1/64 of the cell's
/// half-diagonal (positive inside, negative outside, 0 for none), rounded towards zero
/// after shaving 1e-9 relative and 1 µm, so every rounding errs towards asking the
/// edges (a clearance of 128 units or more is stored as 127, so finding one stops at
/// 128); the centres are computed from the stored corner and scales by the same
/// function when the grid is made and when it is read. 40 words: a line of numbers, and
/// four of cells, of which a fix reads one.
struct ClearanceGrid {
    /// The grid's words: the west edge of the box (unwrapped against the reference
    /// longitude) and its south edge in degrees, cells per degree of longitude and of
    /// latitude, the fixed plane's metres per degree of longitude and of latitude, the
    /// polygon's reference longitude (`PolygonGeometry.referenceLongitude`), metres a
    /// clearance unit (0 for no grid); then the cells' clearances, one byte each, row
    /// after row from the south-west, eight to a word.
    private let words: UnsafeBufferPointer<Double>

    /// Cells a side.
    private static let side = 16
    /// How many words the numbers take, before the cells.
    private static let headerWords = 8
    /// How many words a grid takes.
    static let wordCount = headerWords + side * side / 8

    /// The grid read from `words` (`wordCount` of them, as `words(of:)` made them).
    @inline(__always)
    init(words: UnsafeBufferPointer<Double>) {
        self.words = words
    }

    /// Whether the words hold a grid (a polygon out of range has none).
    @inline(__always)
    var exists: Bool { words[7] > 0 }

    /// The words of `polygon`'s grid, nil outside the range the bracket is proven for
    /// (`InteriorDisc.fixedPlane`).
    static func words(of polygon: PolygonGeometry) -> [Double]? {
        guard let (scaleX, scaleY, span) = InteriorDisc.fixedPlane(of: polygon) else { return nil }
        let box = polygon.boundingBox
        let west = PolygonGeometry.unwrap(box.minLongitude, against: polygon.referenceLongitude)
        let south = box.minLatitude
        let columnsPerDegree = Double(side) / max(span, 1e-12)
        let rowsPerDegree = Double(side) / max(box.maxLatitude - box.minLatitude, 1e-12)
        let halfDiagonalX = scaleX / columnsPerDegree / 2
        let halfDiagonalY = scaleY / rowsPerDegree / 2
        let unit = (halfDiagonalX * halfDiagonalX + halfDiagonalY * halfDiagonalY).squareRoot() / 64
        var words = [west, south, columnsPerDegree, rowsPerDegree, scaleX, scaleY, polygon.referenceLongitude, unit]
        words += [Double](repeating: 0, count: wordCount - headerWords)
        for row in 0..<side {
            for column in 0..<side {
                let (x, y) = center(column: column, row: row, west: west, south: south,
                                    columnsPerDegree: columnsPerDegree, rowsPerDegree: rowsPerDegree)
                // Beyond 128 units a clearance is stored as 127: no need to look further.
                let clearance = polygon.planarDistance(
                    x: x, y: y, metresPerDegreeX: scaleX, metresPerDegreeY: scaleY, limit: 128 * unit) * (1 - 1e-9) - 1e-6
                let units = (clearance / unit * (1 - 1e-6)).rounded(.down)
                guard clearance > InteriorDisc.minimumClearance, units >= 1 else { continue }
                let magnitude = Int8(min(127, units))
                let inside = polygon.contains(Coordinate(latitude: y, longitude: Coordinate.wrappedLongitude(x)))
                let index = row * side + column
                let byte = UInt64(UInt8(bitPattern: inside ? magnitude : -magnitude))
                let word = headerWords + index / 8
                words[word] = Double(bitPattern: words[word].bitPattern | byte << (8 * UInt64(index % 8)))
            }
        }
        return words
    }

    /// The centre of a cell, unwrapped longitude and latitude: the same numbers whenever
    /// computed from the same stored ones.
    @inline(__always)
    private static func center(
        column: Int, row: Int, west: Double, south: Double, columnsPerDegree: Double, rowsPerDegree: Double
    ) -> (x: Double, y: Double) {
        (west + (Double(column) + 0.5) / columnsPerDegree, south + (Double(row) + 0.5) / rowsPerDegree)
    }

    /// What the cell of `point` decides, as `PolygonGeometry.containment` with these
    /// margins would (`insideMargin` the margin it proves inside by, `outsideMargin` the
    /// one it proves outside by), nil when the edges must decide. `cosine` is
    /// cos(latitude · (π/180)) of the point, as `planarBracket` computes it.
    @inline(__always)
    func relation(of point: Coordinate, cosine: Double, insideMargin: Double, outsideMargin: Double) -> Containment.Relation? {
        let west = words[0]
        let south = words[1]
        let columnsPerDegree = words[2]
        let rowsPerDegree = words[3]
        let x = PolygonGeometry.unwrap(point.longitude, against: words[6])
        let column = ((x - west) * columnsPerDegree).rounded(.down)
        let row = ((point.latitude - south) * rowsPerDegree).rounded(.down)
        let side = Double(ClearanceGrid.side)
        guard column >= 0, column < side, row >= 0, row < side else { return nil }
        let index = Int(row) * ClearanceGrid.side + Int(column)
        let word = words[ClearanceGrid.headerWords + index / 8].bitPattern
        let stored = Int8(bitPattern: UInt8(truncatingIfNeeded: word >> (8 * UInt64(index % 8))))
        guard stored != 0 else { return nil }
        let (centerX, centerY) = ClearanceGrid.center(
            column: Int(column), row: Int(row), west: west, south: south,
            columnsPerDegree: columnsPerDegree, rowsPerDegree: rowsPerDegree)
        let dx = (x - centerX) * words[4]
        let dy = (point.latitude - centerY) * words[5]
        let radius = Double(stored.magnitude) * words[7]
        let clearance = radius - (dx * dx + dy * dy).squareRoot() * (1 + 1e-9) - 2e-6
        guard clearance >= InteriorDisc.minimumClearance else { return nil }
        if stored > 0 {
            return insideMargin == 0 || PolygonGeometry.lowerBound(planar: clearance, cosine: cosine) >= insideMargin + 1e-6
                ? .inside : nil
        }
        return outsideMargin == 0 || PolygonGeometry.lowerBound(planar: clearance, cosine: cosine) > outsideMargin + 1e-6
            ? .outside : nil
    }
}
