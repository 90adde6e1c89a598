import Foundation
import GeotifyTestSupport
import Testing

@testable import GeotifyCore

/// A device's fence boxes on its `BoxGrid`: every position an exact box holds (edges,
/// corners and the last representable values inside them included) has its cell in the
/// box's cells, and the grid is fine enough that a position clearly outside a box is
/// outside its cells too (else every fence would be checked for every fix).
@Suite("Box grid")
struct BoxGridTests {
    /// Boxes of 1 m to 20 km scattered over `spread` degrees around `center`; some across
    /// or touching the antimeridian when `center` is near it.
    private func boxes(around center: Coordinate, spread: Double, count: Int, _ random: inout SplitMix64) -> [BoundingBox] {
        (0..<count).map { _ in
            let place = Coordinate(
                latitude: min(89.9, max(-89.9, center.latitude + spread * (random.unit() - 0.5))),
                longitude: Coordinate.wrappedLongitude(center.longitude + spread * (random.unit() - 0.5)))
            return BoundingBox.around(place, radius: pow(10, 4.3 * random.unit()))
        }
    }

    /// Positions in `box`: its corners, its edges' neighbours one ulp inside, and random.
    private func positions(in box: BoundingBox, _ random: inout SplitMix64) -> [Coordinate] {
        let east = box.crossesAntimeridian ? box.maxLongitude + 360 : box.maxLongitude
        var latitudes = [box.minLatitude, box.maxLatitude, box.minLatitude.nextUp, box.maxLatitude.nextDown]
        var longitudes = [box.minLongitude, box.maxLongitude, box.minLongitude.nextUp, box.maxLongitude.nextDown]
        for _ in 0..<12 {
            latitudes.append(box.minLatitude + (box.maxLatitude - box.minLatitude) * random.unit())
            longitudes.append(Coordinate.wrappedLongitude(box.minLongitude + (east - box.minLongitude) * random.unit()))
        }
        return latitudes.flatMap { latitude in longitudes.map { Coordinate(latitude: latitude, longitude: $0) } }
            .filter { box.contains($0) && $0.isValid }
    }

    @Test("every position of a box has its cell in the box's cells")
    func gridBoxesHoldTheirBoxes() {
        var random = SplitMix64(seed: 17)
        let places = [
            (Coordinate(latitude: 52.5, longitude: 13.4), 0.2), (Coordinate(latitude: -33.9, longitude: 151.2), 3),
            (Coordinate(latitude: 0.1, longitude: 179.9), 1), (Coordinate(latitude: 78, longitude: -179.99), 0.5),
            (Coordinate(latitude: 10, longitude: 0), 300),
        ]
        var boxesChecked = 0
        var missed: [String] = []
        for (center, spread) in places {
            for _ in 0..<20 {
                let boxes = boxes(around: center, spread: spread, count: 1 + Int(random.unit() * 30), &random)
                let grid = BoxGrid(boxes)
                for box in boxes {
                    let cells = grid.box(box)
                    for position in positions(in: box, &random) where !cells.contains(grid.cell(of: position)) {
                        missed.append("\(position) in \(box)")
                    }
                    boxesChecked += 1
                }
            }
        }
        let first = missed.first ?? "none"
        #expect(missed.count == 0, "\(missed.count) positions missed, the first: \(first)")
        #expect(boxesChecked > 1_000)
    }

    @Test("a position 20 m outside a box within 0.2° of the others is outside its cells")
    func gridBoxesAreTight() {
        var random = SplitMix64(seed: 5)
        let center = Coordinate(latitude: 47.4, longitude: 8.5)
        for _ in 0..<50 {
            let boxes = boxes(around: center, spread: 0.2, count: 20, &random)
            let grid = BoxGrid(boxes)
            for box in boxes {
                let cells = grid.box(box)
                let middle = (box.minLongitude + box.maxLongitude) / 2
                let outside = [
                    Coordinate(latitude: box.maxLatitude + 0.0002, longitude: middle),
                    Coordinate(latitude: box.minLatitude - 0.0002, longitude: middle),
                    Coordinate(latitude: box.minLatitude, longitude: box.maxLongitude + 0.0003),
                    Coordinate(latitude: box.maxLatitude, longitude: box.minLongitude - 0.0003),
                ]
                for position in outside {
                    #expect(!cells.contains(grid.cell(of: position)), "\(position) outside \(box)")
                }
            }
        }
    }

    @Test("a box across or touching the antimeridian takes every column; an empty box no cell")
    func wrappingAndEmptyBoxes() {
        let wrapping = BoundingBox(minLatitude: -1, maxLatitude: 1, minLongitude: 179.5, maxLongitude: -179.5)
        let touching = BoundingBox(minLatitude: 2, maxLatitude: 3, minLongitude: 179, maxLongitude: 180)
        let grid = BoxGrid([wrapping, touching, BoundingBox(minLatitude: 0, maxLatitude: 3, minLongitude: 10, maxLongitude: 11)])
        for longitude in [-180.0, -179.9, 0, 179.9, 180] {
            #expect(grid.box(wrapping).contains(grid.cell(of: Coordinate(latitude: 0, longitude: longitude))))
            #expect(grid.box(touching).contains(grid.cell(of: Coordinate(latitude: 2.5, longitude: longitude))))
        }
        #expect(!grid.box(wrapping).contains(grid.cell(of: Coordinate(latitude: 2, longitude: 0))))
        let empty = grid.box(.empty)
        for latitude in [-90.0, 0, 1, 3, 90] {
            #expect(!empty.contains(grid.cell(of: Coordinate(latitude: latitude, longitude: 10.5))))
        }
    }
}
