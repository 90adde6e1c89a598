import Foundation
import GeotifyTestSupport
import Testing

@testable import GeotifyCore

/// A device's own fences packed for the evaluator (`OwnFenceTable`) read back as the
/// fences they were made from, and the evaluator deciding through it exactly as it does
/// for the same fences shared (which reads the `Fence`s and their polygons, not the
/// table): boxes, shapes, identifier keys, polygons and their interior discs.
@Suite("Own fence table")
struct OwnFenceTableTests {
    /// Circles and star-shaped polygons (some with a hole) of 30 m to 3 km within 4 km of
    /// `center`, with identifiers short and long, ASCII and not.
    private func fences(around center: Coordinate, count: Int, _ random: inout SplitMix64) -> [Fence] {
        (0..<count).map { index in
            let place = center.offset(north: 8_000 * random.unit() - 4_000, east: 8_000 * random.unit() - 4_000)
            let radius = pow(10, 1.5 + 2 * random.unit())
            let identifier = index % 4 == 3 ? "a-fence-named-at-length-\(index)" : index % 4 == 2 ? "zöne\(index)" : "f\(index)"
            var region = Region.circle(center: place, radius: radius)
            if index % 3 == 0 {
                let outer = (0..<(4 + Int(random.unit() * 40))).map { _ in 2 * Double.pi * random.unit() }.sorted().map { angle in
                    let reach = radius * (0.6 + 0.4 * random.unit())
                    return place.offset(north: reach * sin(angle), east: reach * cos(angle))
                }
                let hole = [(-1.0, -1.0), (-1, 1), (1, 1), (1, -1)].map { place.offset(north: $0.0 * radius / 10, east: $0.1 * radius / 10) }
                if let polygon = try? Polygon(outer: outer, holes: index % 2 == 0 ? [hole] : []) { region = .polygon(polygon) }
            }
            return Fence(identifier: identifier, region: region, note: "", eventType: [.onEntry, .onExit], addedRevision: index % 5)
        }
    }

    /// A fix reads every state entry of its device: with its pending change out of line
    /// an entry is 40 bytes, as `FenceState` says; a field added or moved must not undo
    /// it. Out of line or not, a pending change compares and hashes by its value.
    @Test("a state entry is 40 bytes, its pending change compared by value")
    func aStateEntryIsFortyBytes() {
        #expect(MemoryLayout<FenceState>.stride == 40)
        let change = PendingChange(inside: false, coordinate: Coordinate(latitude: 1, longitude: 2), accuracy: 5, timestamp: 10)
        let entry = FenceState(fence: "home", since: 3, pending: change)
        var same = FenceState(fence: "home", since: 3)
        same.pending = change
        #expect(entry == same && entry.hashValue == same.hashValue)
        #expect(entry.pending == change && same.pending == change)
        var moved = change
        moved.timestamp = 11
        same.pending = moved
        #expect(entry != same)
        same.pending = nil
        #expect(entry != same && same == FenceState(fence: "home", since: 3))
    }

    /// What every fix reads first, the head (grid, boxes and record starts), is a block of
    /// its own from the start of a cache line, with no array header before it: 20 fences
    /// take 4 lines (the array's header and 4-byte starts took 5 or 6), and every record
    /// starts on a line. The table itself stays 24 bytes, in its object's first line.
    @Test("the head of 20 fences takes 4 cache lines, records start on lines")
    func theHeadTakesFourLines() {
        var random = SplitMix64(seed: 5)
        let fences = fences(around: Coordinate(latitude: 52.5, longitude: 13.4), count: 20, &random)
        #expect(MemoryLayout<OwnFenceTable>.size == 24)
        OwnFenceTable(fences).withView { table in
            #expect(Int(bitPattern: table.baseAddress) % CacheLines.length == 0)
            #expect(table.headByteCount == 4 * 8 + 20 * 8 + 21 * 2)
            #expect(table.recordStart(0) * MemoryLayout<Double>.stride == 4 * CacheLines.length)
            for index in 0...fences.count {
                #expect(table.recordStart(index) * MemoryLayout<Double>.stride % CacheLines.length == 0)
            }
        }
    }

    #if DEBUG
    /// The table is `@unchecked Sendable` because its block is never written after it is
    /// made: a debug build checks that when the block is freed (in a child process).
    @Test func aTableWrittenAfterItWasMadeStopsTheDebugBuild() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var table: OwnFenceTable? = OwnFenceTable(
                (0..<3).map { Fence(identifier: "f\($0)", region: .circle(center: Coordinate(latitude: 52.5, longitude: 13.4 + Double($0) / 100), radius: 50), note: "", eventType: [.onEntry]) })
            table?.withView { UnsafeMutableRawPointer(mutating: $0.baseAddress).storeBytes(of: 1.0, as: Double.self) }
            table = nil
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("an own-fence table was changed after it was made"), "\(message)")
    }
    #endif

    /// A block of more lines than 2 bytes count (here 70 000 circles, a line each) keeps
    /// its record starts in 4 bytes, and reads back all the same.
    @Test("a table of more than 65 535 lines reads back")
    func aLargeTableReadsBack() {
        let center = Coordinate(latitude: 47.37, longitude: 8.54)
        let fences = (0..<70_000).map { index in
            Fence(identifier: "c\(index)", region: .circle(center: center.offset(north: Double(index % 300), east: Double(index / 300)), radius: 20 + Double(index % 7)),
                  note: "", eventType: [.onEntry], addedRevision: index % 3)
        }
        OwnFenceTable(fences).withView { table in
            #expect(table.headByteCount == 4 * 8 + 70_000 * 8 + 70_001 * 4)
            for index in stride(from: 0, to: fences.count, by: 997) + [fences.count - 1] {
                let shape = table.shape(index)
                #expect(shape.isCircle && shape.radius == fences[index].size && shape.addedRevision == index % 3)
                #expect(table.identifierKey(index) == IdentifierKey(fences[index].identifier))
                #expect(table.box(index) == table.grid.box(fences[index].boundingBox))
            }
        }
    }

    @Test("every fence reads back: box, shape, key and polygon")
    func theTableReadsBack() throws {
        var random = SplitMix64(seed: 3)
        for center in [Coordinate(latitude: 52.5, longitude: 13.4), Coordinate(latitude: -17.8, longitude: 179.99), Coordinate(latitude: 78, longitude: 15)] {
            let fences = fences(around: center, count: 30, &random)
            OwnFenceTable(fences).withView { table in
                #expect(table.count == fences.count)
                #expect(table.grid == BoxGrid(fences.map(\.boundingBox)))
                for (index, fence) in fences.enumerated() {
                    #expect(table.box(index) == table.grid.box(fence.boundingBox))
                    #expect(table.identifierKey(index) == IdentifierKey(fence.identifier))
                    let shape = table.shape(index)
                    #expect(shape.size == fence.size)
                    #expect(shape.addedRevision == fence.addedRevision)
                    #expect(shape.overridesRules == fence.overridesRules)
                    switch fence.region {
                    case .circle(let center, let radius):
                        #expect(shape.isCircle && shape.center == center && shape.radius == radius)
                        #expect(table.interiorDisc(index) == nil)
                    case .polygon(let polygon):
                        #expect(!shape.isCircle)
                        let geometry = table.polygon(index)
                        for _ in 0..<50 {
                            let point = polygon.center.offset(north: 4 * fence.size * (random.unit() - 0.5), east: 4 * fence.size * (random.unit() - 0.5))
                            #expect(geometry.contains(point) == polygon.contains(point))
                            #expect(geometry.containment(of: point, accuracy: 10, hysteresis: 20, size: fence.size)
                                == polygon.containment(of: point, accuracy: 10, hysteresis: 20, size: fence.size))
                        }
                    }
                }
            }
        }
    }

    @Test("own fences decide every fix exactly as the same fences shared")
    func ownDecidesAsShared() {
        var random = SplitMix64(seed: 8)
        let evaluator = Evaluator()
        for center in [Coordinate(latitude: 48.2, longitude: 16.4), Coordinate(latitude: -16.5, longitude: -179.995)] {
            let fences = fences(around: center, count: 24, &random)
            let own = DeviceFences(own: fences)
            let shared = DeviceFences(shared: [SharedFences(owner: "everyone", fences: fences)])
            var ownState = DeviceState()
            var sharedState = DeviceState()
            var position = center
            for step in 0..<3_000 {
                position = position.offset(north: 300 * (random.unit() - 0.5), east: 300 * (random.unit() - 0.5))
                if step % 200 == 0 { position = center }
                let fix = Fix(device: "d", coordinate: position, accuracy: 40 * random.unit(), timestamp: Double(step))
                let ownEvaluation = evaluator.evaluate(fix, fences: own, revision: 4, now: fix.timestamp, state: &ownState)
                let sharedEvaluation = evaluator.evaluate(fix, fences: shared, revision: 4, now: fix.timestamp, state: &sharedState)
                let decided = { (evaluation: Evaluation) in
                    evaluation.transitions.map { "\($0.fence.identifier) \($0.kind)" }.sorted()
                }
                #expect(decided(ownEvaluation) == decided(sharedEvaluation))
                #expect(ownState.fences == sharedState.fences)
            }
            #expect(ownState.badge == sharedState.badge)
            #expect(ownState.badge > 20)
        }
    }

    @Test("a state entry equal to a fence's identifier but not byte for byte is that fence's")
    func canonicallyEqualIdentifiersMatch() {
        let center = Coordinate(latitude: 45.76, longitude: 4.83)
        let fence = Fence(identifier: "café", region: .circle(center: center, radius: 200), note: "", eventType: [.onEntry, .onExit])
        var state = DeviceState(revision: 0, fences: [FenceState(fence: "cafe\u{301}", since: 0)])
        let away = Fix(device: "d", coordinate: center.offset(north: 2_000, east: 0), accuracy: 5, timestamp: 10)
        let evaluation = Evaluator().evaluate(away, fences: [fence], revision: 0, now: 10, state: &state)
        #expect(evaluation.transitions.map(\.kind) == [.exit])
        #expect(evaluation.forgotten.isEmpty)
        #expect(state.fences.isEmpty)
    }

    @Test("a fix deep inside a polygon stays in; leaving it exits")
    func deepInsideAPolygon() throws {
        let center = Coordinate(latitude: 59.33, longitude: 18.07)
        let square = [(-1.0, -1.0), (-1, 1), (1, 1), (1, -1)].map { center.offset(north: $0.0 * 1_000, east: $0.1 * 1_000) }
        let fence = Fence(identifier: "park", region: .polygon(try Polygon(outer: square)), note: "", eventType: [.onEntry, .onExit])
        var state = DeviceState()
        var kinds: [[TransitionKind]] = []
        for (time, place) in [center.offset(north: 3_000, east: 0), center, center.offset(north: 100, east: 50), center.offset(north: 990, east: 0), center.offset(north: 1_200, east: 0)].enumerated() {
            let fix = Fix(device: "d", coordinate: place, accuracy: 10, timestamp: Double(time))
            kinds.append(Evaluator().evaluate(fix, fences: [fence], revision: 0, now: fix.timestamp, state: &state).transitions.map(\.kind))
        }
        #expect(kinds == [[], [.enter], [], [], [.exit]])
    }
}
