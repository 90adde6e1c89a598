import Foundation
import GeotifyTestSupport
import Testing

@testable import GeotifyCore

/// A shared set's polygons packed in slot order (`PackedPolygons`, read through
/// `SpatialFences`) answer every containment question exactly as the `Polygon` of each
/// fence does: holes, the antimeridian, several polygons side by side, and sets rebuilt
/// with fences replaced or removed.
@Suite("Packed polygons")
struct PackedPolygonsTests {
    /// A ring of `count` vertices at 60–100 % of `radius` degrees around (`latitude`,
    /// `longitude`), at sorted angles (so it is simple), longitudes wrapped.
    private func ring(_ latitude: Double, _ longitude: Double, radius: Double, count: Int, _ random: inout SplitMix64) -> [Coordinate] {
        (0..<count).map { _ in 2 * Double.pi * random.unit() }.sorted().map { angle in
            let reach = radius * (0.6 + 0.4 * random.unit())
            return Coordinate(
                latitude: latitude + reach * sin(angle),
                longitude: Coordinate.wrappedLongitude(longitude + reach * cos(angle)))
        }
    }

    /// A square of half-side `half` degrees around a point, counter-clockwise.
    private func square(_ latitude: Double, _ longitude: Double, half: Double) -> [Coordinate] {
        [(-half, -half), (-half, half), (half, half), (half, -half)].map {
            Coordinate(latitude: latitude + $0.0, longitude: Coordinate.wrappedLongitude(longitude + $0.1))
        }
    }

    /// Polygons with and without holes, some across the antimeridian, one near a pole.
    private func polygons(_ random: inout SplitMix64) throws -> [Polygon] {
        var polygons: [Polygon] = []
        for index in 0..<40 {
            let latitude = index == 0 ? 84.0 : -60 + 120 * random.unit()
            let longitude = index % 4 == 1 ? 179.99 : -180 + 360 * random.unit()
            let radius = 0.001 + 0.05 * random.unit()
            switch index % 3 {
            case 0:
                polygons.append(try Polygon(outer: ring(latitude, longitude, radius: radius, count: 4 + index, &random)))
            case 1:
                polygons.append(try Polygon(
                    outer: square(latitude, longitude, half: radius), holes: [square(latitude, longitude, half: radius / 3)]))
            default:
                polygons.append(try Polygon(
                    outer: square(latitude, longitude, half: radius),
                    holes: [square(latitude + radius / 2, longitude, half: radius / 5), square(latitude - radius / 2, longitude, half: radius / 5)]))
            }
        }
        return polygons
    }

    /// Points in and around `polygon`: across its box and a little beyond, its vertices,
    /// and points a hair from them.
    private func points(around polygon: Polygon, _ random: inout SplitMix64) -> [Coordinate] {
        let box = polygon.boundingBox
        var span = box.maxLongitude - box.minLongitude
        if span < 0 { span += 360 }
        let height = box.maxLatitude - box.minLatitude
        var points = (0..<150).map { _ in
            Coordinate(
                latitude: box.minLatitude - height / 4 + 1.5 * height * random.unit(),
                longitude: Coordinate.wrappedLongitude(box.minLongitude - span / 4 + 1.5 * span * random.unit()))
        }
        for vertex in polygon.outer + polygon.holes.joined() {
            points.append(vertex)
            points.append(Coordinate(latitude: vertex.latitude + 1e-9, longitude: vertex.longitude))
        }
        return points
    }

    /// The questions the evaluator asks: no margins, an accuracy, a hysteresis, both.
    private let margins: [(accuracy: Double, hysteresis: Double)] = [(0, 0), (25, 0), (0, 40), (10, 30), (500, 100)]

    @Test("each packed polygon answers as its Polygon, holes and antimeridian included")
    func packedPolygonsAnswerAsTheirPolygons() throws {
        var random = SplitMix64(seed: 17)
        let polygons = try polygons(&random)
        var packed = PackedPolygons(capacityFor: polygons)
        let starts = polygons.map { packed.append($0) }
        var inside = 0
        var uncertain = 0
        for (index, polygon) in polygons.enumerated() {
            let size = Region.polygon(polygon).size
            for point in points(around: polygon, &random) {
                let contained = packed.withGeometry(at: starts[index]) { $0.contains(point) }
                #expect(contained == polygon.contains(point), "polygon \(index) at \(point)")
                if contained { inside += 1 }
                for (accuracy, hysteresis) in margins {
                    let answer = packed.withGeometry(at: starts[index]) {
                        $0.containment(of: point, accuracy: accuracy, hysteresis: hysteresis, size: size)
                    }
                    #expect(answer == Region.polygon(polygon).containment(of: point, accuracy: accuracy, hysteresis: hysteresis))
                    if answer.relation == .uncertain { uncertain += 1 }
                }
            }
        }
        #expect(inside > 1_000 && uncertain > 100, "the points reach inside and the margins")
    }

    @Test("a point in a hole is outside, in the ring around it inside, across the antimeridian too")
    func holesAndTheAntimeridian() throws {
        let holed = try Polygon(outer: square(10, 179.95, half: 0.1), holes: [square(10, 179.95, half: 0.02)])
        var packed = PackedPolygons(capacityFor: [])
        let square = packed.append(try Polygon(outer: square(0, 0, half: 1)))
        let ring = packed.append(holed)
        let inHole = Coordinate(latitude: 10, longitude: 179.95)
        let inRingEast = Coordinate(latitude: 10, longitude: -179.98)
        let inRingWest = Coordinate(latitude: 10.05, longitude: 179.9)
        let beyond = Coordinate(latitude: 10, longitude: -179.8)
        #expect(!packed.withGeometry(at: ring) { $0.contains(inHole) })
        #expect(packed.withGeometry(at: ring) { $0.contains(inRingEast) })
        #expect(packed.withGeometry(at: ring) { $0.contains(inRingWest) })
        #expect(!packed.withGeometry(at: ring) { $0.contains(beyond) })
        #expect(packed.withGeometry(at: square) { $0.contains(Coordinate(latitude: 0.5, longitude: 0.5)) })
        #expect(!packed.withGeometry(at: square) { $0.contains(inRingEast) })
    }

    /// Every slot of `set` answers as its fence's region.
    private func expectSlotsAnswerAsTheirFences(_ set: SharedFences, _ random: inout SplitMix64) {
        for slot in set.spatial.slots {
            let fence = set.fences[Int(slot.position)]
            #expect(fence.identifier == slot.identifier)
            let box = fence.boundingBox
            for _ in 0..<40 {
                let point = Coordinate(
                    latitude: box.minLatitude + (box.maxLatitude - box.minLatitude) * (1.2 * random.unit() - 0.1),
                    longitude: Coordinate.wrappedLongitude(
                        box.minLongitude + (box.crossesAntimeridian ? box.maxLongitude + 360 - box.minLongitude : box.maxLongitude - box.minLongitude)
                            * (1.2 * random.unit() - 0.1)))
                for (accuracy, hysteresis) in margins {
                    #expect(
                        set.spatial.containment(of: slot, point: point, accuracy: accuracy, hysteresis: hysteresis)
                            == fence.region.containment(of: point, accuracy: accuracy, hysteresis: hysteresis),
                        "\(fence.identifier) at \(point)")
                }
            }
        }
    }

    @Test("a shared set's slots answer as their fences, and still do after fences are replaced and removed")
    func slotsAnswerAsTheirFencesAcrossRevisions() throws {
        var random = SplitMix64(seed: 23)
        let shapes = try polygons(&random)
        var fences = shapes.enumerated().map { index, polygon in
            Fence(identifier: "p\(index)", region: .polygon(polygon), note: "", eventType: [.onEntry, .onExit], addedRevision: 1)
        }
        fences += (0..<40).map { index in
            Fence(identifier: "c\(index)", region: .circle(center: shapes[index].center, radius: 300), note: "",
                  eventType: [.onEntry, .onExit], addedRevision: 1)
        }
        let first = SharedFences(owner: "shared", fences: fences)
        expectSlotsAnswerAsTheirFences(first, &random)

        // Polygons replaced by others (a different shape under the same identifier, a
        // circle by a polygon), some removed, the order changed.
        var revised = fences
        revised[3] = Fence(identifier: "p3", region: .polygon(try Polygon(outer: square(45, 7, half: 0.02), holes: [square(45, 7, half: 0.005)])),
                           note: "", eventType: [.onEntry, .onExit], addedRevision: 2)
        revised[45] = Fence(identifier: "c5", region: .polygon(try Polygon(outer: square(-33, 151, half: 0.01))),
                            note: "", eventType: [.onEntry, .onExit], addedRevision: 2)
        revised.remove(at: 10)
        revised.remove(at: 0)
        revised.reverse()
        let second = first.with(revised)
        expectSlotsAnswerAsTheirFences(second, &random)

        // The replaced polygon answers with its new shape, the removed ones are gone.
        let hole = Coordinate(latitude: 45, longitude: 7)
        let ring = Coordinate(latitude: 45.01, longitude: 7)
        let slot = try #require(second.spatial.slots.first { $0.identifier == "p3" })
        #expect(second.spatial.containment(of: slot, point: hole, accuracy: 0, hysteresis: 0).relation == .outside)
        #expect(second.spatial.containment(of: slot, point: ring, accuracy: 0, hysteresis: 0).relation == .inside)
        #expect(!second.spatial.slots.contains { $0.identifier == "p0" || $0.identifier == "p10" })
        #expect(second.spatial.slots.count == revised.count)
    }
}
