import Foundation

/// A device's own fences as the evaluator reads them for every fix, in one contiguous
/// run of 8-byte words: first every fence's compact box (two words a fence), then every
/// fence's shape (`FenceShape`, eight words a fence), then the runs of the polygons
/// (`PolygonGeometry`), in the order of the fences.
///
/// Fixes arrive device after device, so a device's fence data is cold for nearly every
/// fix: each separate object a fix reads (the boxes, the shapes, a `Fence`, its
/// polygon's storage, its edges) costs a memory access of its own, one after the other,
/// each ten times the geometry it feeds. Here a fix reads one block from its start: the
/// boxes in a few consecutive cache lines, then the shapes and polygons of the fences
/// whose box holds the fix, a little further on. No reference is touched, so no retain
/// or release either.
struct OwnFenceTable: Sendable {
    /// How many fences.
    let count: Int
    /// The words (see the type's description).
    let words: [Double]

    /// The words of one shape.
    fileprivate static let shapeWords = 8

    init(_ fences: [Fence]) {
        count = fences.count
        var words: [Double] = []
        let shapesStart = 2 * fences.count
        let polygonsStart = shapesStart + OwnFenceTable.shapeWords * fences.count
        words.reserveCapacity(polygonsStart + fences.reduce(0) { total, fence in
            guard case .polygon(let polygon) = fence.region else { return total }
            return total + polygon.run.count
        })
        for fence in fences {
            let (south, north, west, east) = CompactBox(fence.boundingBox).bitPatterns
            words.append(Double(bitPattern: UInt64(south) | UInt64(north) << 32))
            words.append(Double(bitPattern: UInt64(west) | UInt64(east) << 32))
        }
        var polygonStart = polygonsStart
        for fence in fences {
            var shape = (latitude: 0.0, longitude: 0.0, radius: -1.0, cosine: 1.0, polygon: -1)
            switch fence.region {
            case .circle(let center, let radius):
                shape = (center.latitude, center.longitude, radius, cos(center.latitude * .pi / 180), -1)
            case .polygon(let polygon):
                shape.polygon = polygonStart
                polygonStart += polygon.run.count
            }
            words += [
                shape.latitude, shape.longitude, shape.radius, shape.cosine, fence.size,
                Double(bitPattern: UInt64(bitPattern: Int64(fence.addedRevision))),
                Double(shape.polygon), fence.overridesRules ? 1 : 0,
            ]
        }
        for fence in fences {
            if case .polygon(let polygon) = fence.region { words += polygon.run }
        }
        self.words = words
    }

    /// Calls `body` with a view of the table.
    @inline(__always)
    func withView<Result>(_ body: (View) -> Result) -> Result {
        words.withUnsafeBufferPointer { body(View(words: $0, count: count)) }
    }

    /// The table read in place.
    struct View {
        fileprivate let words: UnsafeBufferPointer<Double>
        /// How many fences.
        let count: Int

        /// The compact box of fence `index`.
        @inline(__always)
        func box(_ index: Int) -> CompactBox {
            let latitudes = words[2 * index].bitPattern
            let longitudes = words[2 * index + 1].bitPattern
            return CompactBox(bitPatterns: (
                UInt32(truncatingIfNeeded: latitudes), UInt32(truncatingIfNeeded: latitudes >> 32),
                UInt32(truncatingIfNeeded: longitudes), UInt32(truncatingIfNeeded: longitudes >> 32)))
        }

        /// The shape of fence `index`.
        @inline(__always)
        func shape(_ index: Int) -> FenceShape {
            let start = 2 * count + OwnFenceTable.shapeWords * index
            return FenceShape(
                latitude: words[start], longitude: words[start + 1], radius: words[start + 2],
                cosineOfLatitude: words[start + 3], size: words[start + 4],
                addedRevision: Int(Int64(bitPattern: words[start + 5].bitPattern)),
                polygon: Int(words[start + 6]), overridesRules: words[start + 7] != 0)
        }

        /// The geometry of the polygon whose run starts at `start` (a shape's `polygon`).
        @inline(__always)
        func polygon(at start: Int) -> PolygonGeometry {
            PolygonGeometry(run: UnsafeBufferPointer(rebasing: words[start...]))
        }
    }
}
