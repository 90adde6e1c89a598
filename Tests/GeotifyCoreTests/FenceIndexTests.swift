import Foundation
import GeotifyCore
import GeotifyTestSupport
import Testing

@Suite("FenceIndex")
struct FenceIndexTests {
    /// A position somewhere interesting: anywhere, near a pole, or near the antimeridian.
    static func position(_ random: inout SplitMix64) -> Coordinate {
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1:
            let pole: Double = Bool.random(using: &random) ? 90 : -90
            return Coordinate(latitude: pole - pole / 90 * Double.random(in: 0...1.5, using: &random),
                              longitude: Double.random(in: -180...180, using: &random))
        case 2, 3:
            let side: Double = Bool.random(using: &random) ? 180 : -180
            return Coordinate(latitude: Double.random(in: -85...85, using: &random),
                              longitude: side - side / 180 * Double.random(in: 0...0.8, using: &random))
        case 4:
            return Coordinate(latitude: Double.random(in: -90...90, using: &random),
                              longitude: Double.random(in: -180...180, using: &random))
        default:
            // A dense "city" so that boxes overlap and nodes hold many candidates.
            return Coordinate(latitude: 52.5 + Double.random(in: -0.3...0.3, using: &random),
                              longitude: 13.4 + Double.random(in: -0.5...0.5, using: &random))
        }
    }

    static func circles(_ count: Int, _ random: inout SplitMix64) -> [Fence] {
        (0..<count).map { index in
            let radius = [1.0, 50, 500, 5_000, 60_000][Int.random(in: 0..<5, using: &random)] * Double.random(in: 0.5...1, using: &random)
            return Fence(identifier: "f\(index)", region: .circle(center: position(&random), radius: radius),
                         note: "", eventType: [.onEntry, .onExit])
        }
    }

    /// Boxes of every shape the index must handle: circles' boxes, polygons' boxes
    /// (some crossing the antimeridian), and hand-made edge cases.
    static func boxes(_ random: inout SplitMix64) -> [BoundingBox] {
        var boxes = circles(800, &random).map(\.boundingBox)
        for _ in 0..<200 {
            let center = position(&random)
            let vertices = Int.random(in: 4...12, using: &random)
            let ring = (0..<vertices).map { vertex in
                let angle = Double(vertex) / Double(vertices) * 2 * Double.pi
                let size = Double.random(in: 0.001...0.5, using: &random)
                return Coordinate(latitude: max(-90, min(90, center.latitude + size * sin(angle))),
                                  longitude: Coordinate.wrappedLongitude(center.longitude + size * cos(angle)))
            }
            if let polygon = try? Polygon(outer: ring) { boxes.append(polygon.boundingBox) }
        }
        boxes += [
            .world, .empty,
            BoundingBox(minLatitude: 10, maxLatitude: 20, minLongitude: 170, maxLongitude: 180),
            BoundingBox(minLatitude: 10, maxLatitude: 20, minLongitude: -180, maxLongitude: -170),
            BoundingBox(minLatitude: 10, maxLatitude: 20, minLongitude: 180, maxLongitude: 180),
            BoundingBox(minLatitude: -20, maxLatitude: -10, minLongitude: -180, maxLongitude: -180),
            BoundingBox(minLatitude: 0, maxLatitude: 1, minLongitude: 180, maxLongitude: -179),
            BoundingBox(minLatitude: 0, maxLatitude: 1, minLongitude: 179, maxLongitude: -180),
            BoundingBox(minLatitude: 89, maxLatitude: 90, minLongitude: -180, maxLongitude: 180),
            BoundingBox(minLatitude: -90, maxLatitude: -90, minLongitude: -180, maxLongitude: 180),
            BoundingBox(minLatitude: 5, maxLatitude: 5, minLongitude: 7, maxLongitude: 7),
        ]
        return boxes
    }

    /// Query points: random ones, every box's corners and edges, and the special meridians
    /// and parallels (including longitudes that need wrapping).
    static func points(around boxes: [BoundingBox], _ random: inout SplitMix64) -> [Coordinate] {
        var points = (0..<2_000).map { _ in position(&random) }
        for box in boxes where !box.isEmpty {
            for latitude in [box.minLatitude, box.maxLatitude, (box.minLatitude + box.maxLatitude) / 2] {
                for longitude in [box.minLongitude, box.maxLongitude] {
                    points.append(Coordinate(latitude: latitude, longitude: longitude))
                }
            }
        }
        for latitude in [-90.0, -89.999, 0, 0.5, 10, 15, 20, 52.5, 89.5, 90] {
            for longitude in [-540.0, -180, -179.5, -179, 0, 7, 179, 179.5, 180, 190, 540] {
                points.append(Coordinate(latitude: latitude, longitude: longitude))
            }
        }
        return points
    }

    @Test("candidates are exactly the boxes that contain the point, each once (poles, antimeridian, edges)")
    func candidatesMatchALinearBoxScan() {
        var random = SplitMix64(seed: 20_240_601)
        let boxes = Self.boxes(&random)
        let index = FenceIndex(boxes: boxes)
        #expect(index.count == boxes.count)
        var found: [Int] = []
        var checked = 0
        for point in Self.points(around: boxes, &random) {
            index.candidates(containing: point, into: &found)
            let expected = boxes.indices.filter { boxes[$0].contains(point) }
            #expect(found.sorted() == expected, "at \(point)")
            checked += expected.count
        }
        #expect(checked > 10_000, "the workload should put points in many boxes")
    }

    @Test("fixes evaluated through index candidates contain exactly what a scan of all fences contains")
    func indexedContainmentMatchesALinearScan() {
        var random = SplitMix64(seed: 7)
        let fences = Self.circles(2_000, &random)
        let index = FenceIndex(fences)
        var candidates: [Int] = []
        var inside = 0
        for _ in 0..<3_000 {
            // Half the fixes near a fence's edge, where containment is decided finely.
            let point: Coordinate
            if Bool.random(using: &random), case let .circle(center, radius) = fences.randomElement(using: &random)!.region {
                let box = BoundingBox.around(center, radius: radius * Double.random(in: 0.9...1.1, using: &random))
                point = Coordinate(latitude: Double.random(in: box.minLatitude...box.maxLatitude, using: &random),
                                   longitude: box.crossesAntimeridian ? box.minLongitude : Double.random(in: box.minLongitude...box.maxLongitude, using: &random))
            } else {
                point = Self.position(&random)
            }
            index.candidates(containing: point, into: &candidates)
            let indexed = candidates.filter { fences[$0].contains(point) }.sorted()
            let scanned = fences.indices.filter { fences[$0].contains(point) }
            #expect(indexed == scanned, "at \(point)")
            inside += scanned.count
        }
        #expect(inside > 1_000, "the workload should put fixes inside fences")
    }

    @Test("possible candidates include every candidate; renumbered, the index names the same fences in the same order")
    func possibleCandidatesAndTreeOrder() {
        var random = SplitMix64(seed: 20_261_130)
        let boxes = Self.boxes(&random)
        let index = FenceIndex(boxes: boxes)
        let (renumbered, fences) = index.numberedInTreeOrder()
        #expect(fences.count == boxes.filter { !$0.isEmpty }.count)
        #expect(Set(fences).count == fences.count)
        var extra = 0
        for point in Self.points(around: boxes, &random) {
            var exact: [Int] = []
            index.forEachCandidate(containing: point) { exact.append($0) }
            var possible: [Int] = []
            index.forEachPossibleCandidate(containing: point) { possible.append($0) }
            #expect(Set(exact).isSubset(of: possible), "at \(point)")
            #expect(possible.allSatisfy { exact.contains($0) || !boxes[$0].contains(point) })
            extra += possible.count - exact.count
            var named: [Int] = []
            renumbered.forEachCandidate(containing: point) { named.append(fences[$0]) }
            #expect(named == exact, "at \(point)")
        }
        #expect(extra < 100, "single precision adds only the boxes within rounding of a position")
    }

    @Test("an empty index and empty boxes have no candidates")
    func emptyIndex() {
        var found = [1, 2, 3]
        FenceIndex([]).candidates(containing: Coordinate(latitude: 0, longitude: 0), into: &found)
        #expect(found.isEmpty)
        let index = FenceIndex(boxes: [.empty, .world, .empty])
        index.candidates(containing: Coordinate(latitude: 90, longitude: 180), into: &found)
        #expect(found == [1])
        index.candidates(containing: Coordinate(latitude: .nan, longitude: 0), into: &found)
        #expect(found.isEmpty)
    }
}
