/// A grid of 65 534 × 65 534 cells laid over one device's fences, on which each fence's
/// bounding box is 8 bytes (four 16-bit cell numbers) instead of 16 in
/// single precision: a fix's scan of its device's 20 boxes reads three cache lines
/// instead of five, and compares integers.
///
/// A position's offset from the grid's south-west corner is `(value − corner) × scale` in
/// each axis; its cell is `floor` of that, plus one, while the offset lies in
/// 0...`lastOffset`, and 0 below (or NaN), 65 535 above. A box's cells run from its
/// south-west corner's cell to its north-east corner's. Subtraction, multiplication by a
/// positive number and `floor` round monotonically (as does clamping), so a position
/// inside a box has its cell inside the box's cells: the
/// grid box holds every position the exact box holds, and perhaps some near it (a
/// cell's width: 0.3 m for fences 20 km apart, a few hundred metres for fences spread
/// over the world), which the exact checks that follow decide as outside. The fences'
/// boxes define the corner and scale, so their offsets lie in 0...65 001 and no
/// position outside all of them takes their cells through clamping. Boxes across the
/// antimeridian, or touching it (where -180 and 180 are the same meridian), take every
/// column; a fix's longitude outside -180...180 (which no valid fix has) takes column 0,
/// which only they hold.
struct BoxGrid: Sendable, Equatable {
    /// The grid's south-west corner, in degrees.
    let south: Double
    let west: Double
    /// Cells per degree.
    let rowsPerDegree: Double
    let columnsPerDegree: Double

    /// The largest offset that has a cell of its own (`floor` of it, plus one).
    private static let lastOffset = 65_533.0
    /// How many cells the boxes span, short of `lastOffset`, so that rounding never
    /// clamps one of them.
    private static let span = 65_000.0

    /// The grid over `boxes` (the boxes of one device's fences).
    init(_ boxes: [BoundingBox]) {
        let finite = boxes.filter { !$0.isEmpty && $0.minLatitude.isFinite && $0.maxLatitude.isFinite }
        let bounded = finite.filter { !BoxGrid.takesEveryColumn($0) }
        let south = finite.map(\.minLatitude).min() ?? 0
        let north = finite.map(\.maxLatitude).max() ?? 0
        let west = bounded.map(\.minLongitude).min() ?? 0
        let east = bounded.map(\.maxLongitude).max() ?? 0
        self.south = south
        self.west = west
        rowsPerDegree = BoxGrid.scale(over: north - south)
        columnsPerDegree = BoxGrid.scale(over: east - west)
    }

    /// The grid with this corner and these scales (as `OwnFenceTable` stores it).
    @inline(__always)
    init(south: Double, west: Double, rowsPerDegree: Double, columnsPerDegree: Double) {
        self.south = south
        self.west = west
        self.rowsPerDegree = rowsPerDegree
        self.columnsPerDegree = columnsPerDegree
    }

    /// Cells per degree for boxes spanning `degrees`: finite and positive whatever the span.
    private static func scale(over degrees: Double) -> Double {
        span / min(360, max(degrees, 1e-6))
    }

    /// Whether `box` takes every column: it crosses the antimeridian or touches it.
    private static func takesEveryColumn(_ box: BoundingBox) -> Bool {
        !(box.minLongitude > -180 && box.maxLongitude < 180 && box.minLongitude <= box.maxLongitude)
    }

    /// The cell of offset `value − origin` (scaled): 0 below the grid (or NaN), 65 535
    /// above it.
    @inline(__always)
    private static func cell(_ value: Double, from origin: Double, scale: Double) -> UInt16 {
        let offset = (value - origin) * scale
        guard offset >= 0 else { return 0 }
        return offset <= lastOffset ? UInt16(offset.rounded(.down)) + 1 : UInt16.max
    }

    /// The cell of a position: its row and column.
    @inline(__always)
    func cell(of point: Coordinate) -> Cell {
        let longitude = point.longitude
        return Cell(
            row: BoxGrid.cell(point.latitude, from: south, scale: rowsPerDegree),
            column: longitude >= -180 && longitude <= 180 ? BoxGrid.cell(longitude, from: west, scale: columnsPerDegree) : 0)
    }

    /// The cells of `box`; none for an empty box.
    func box(_ box: BoundingBox) -> Box {
        guard !box.isEmpty else { return Box(south: UInt16.max, north: 0, west: UInt16.max, east: 0) }
        let south = BoxGrid.cell(box.minLatitude, from: self.south, scale: rowsPerDegree)
        let north = BoxGrid.cell(box.maxLatitude, from: self.south, scale: rowsPerDegree)
        guard !BoxGrid.takesEveryColumn(box) else { return Box(south: south, north: north, west: 0, east: UInt16.max) }
        return Box(
            south: south, north: north,
            west: BoxGrid.cell(box.minLongitude, from: west, scale: columnsPerDegree),
            east: BoxGrid.cell(box.maxLongitude, from: west, scale: columnsPerDegree))
    }

    /// A position's row and column on the grid.
    struct Cell: Equatable {
        let row: UInt16
        let column: UInt16
    }

    /// A box on the grid: its first and last row and column, packed into one word (south,
    /// north, west, east from the lowest bits up) so a table stores it in 8 bytes.
    struct Box: Equatable {
        let bits: UInt64

        init(south: UInt16, north: UInt16, west: UInt16, east: UInt16) {
            bits = UInt64(south) | UInt64(north) << 16 | UInt64(west) << 32 | UInt64(east) << 48
        }

        @inline(__always)
        init(bits: UInt64) {
            self.bits = bits
        }

        /// Whether the box holds `cell`.
        @inline(__always)
        func contains(_ cell: Cell) -> Bool {
            let south = UInt16(truncatingIfNeeded: bits)
            let north = UInt16(truncatingIfNeeded: bits >> 16)
            let west = UInt16(truncatingIfNeeded: bits >> 32)
            let east = UInt16(truncatingIfNeeded: bits >> 48)
            return cell.row >= south && cell.row <= north && cell.column >= west && cell.column <= east
        }
    }
}
