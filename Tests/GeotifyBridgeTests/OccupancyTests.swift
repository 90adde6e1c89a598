import Dispatch
import Synchronization
import Testing

@testable import GeotifyBridge
import GeotifyCore
import GeotifyStore

/// The shared fences' occupancy: counts by the set of devices inside, and the order in
/// which counts are queued for publishing across lanes and announcements.
@Suite struct OccupancyTests {
    static let plaza = Occupancy.Key(owner: "shared", fence: "plaza")

    static func change(_ device: String, inside: Bool) -> OccupancyChange {
        OccupancyChange(owner: "shared", fence: "plaza", device: device, inside: inside)
    }

    @Test func onlyChangedCountsAreQueuedInTheirOrder() {
        let occupancy = Occupancy()
        var queued: [Int] = []
        occupancy.apply([Self.change("a", inside: true), Self.change("b", inside: true), Self.change("a", inside: true)]) {
            queued += $0.compactMap(\.count)
        }
        #expect(queued == [1, 2], "a repeated entry changes nothing")
        occupancy.apply([Self.change("c", inside: false), Self.change("a", inside: false)]) { queued += $0.compactMap(\.count) }
        #expect(queued == [1, 2, 1], "leaving a fence one was not inside changes nothing")
        occupancy.counts(of: [Self.plaza, Occupancy.Key(owner: "shared", fence: "empty")]) { queued += $0 }
        #expect(queued == [1, 2, 1, 1, 0])
    }

    /// At start the counts come from the saved states: a device counts in the shared
    /// fences it was inside, not in those it was last outside of.
    @Test func theCountsAtStartAreOfTheDevicesInside() throws {
        let text = """
            {"devices": {"a/phone": [], "b/phone": [], "c/phone": []},
             "shared": [
              {"identifier": "plaza", "latitude": 52.5, "longitude": 13.4, "radius": 100, "eventType": "onEntry"},
              {"identifier": "park", "latitude": 52.6, "longitude": 13.4, "radius": 100, "eventType": "onEntry"}]}
            """
        let book = try #require(FenceFile(path: "fences.json").parse(Array(text.utf8)).book)
        let occupancy = Occupancy()
        occupancy.load([
            "a/phone": DeviceState(fences: [FenceState(fence: "plaza", since: 1), FenceState(fence: "park", inside: false, since: 1)]),
            "b/phone": DeviceState(fences: [FenceState(fence: "plaza", inside: false, since: 1)]),
            "c/phone": DeviceState(fences: [FenceState(fence: "plaza", since: 1), FenceState(fence: "park", inside: false, since: 1)]),
        ], book: book)
        var counts: [Int] = []
        occupancy.counts(of: [Self.plaza, Occupancy.Key(owner: "shared", fence: "park")]) { counts = $0 }
        #expect(counts == [2, 0])
    }

    /// A lane changes a count while an announcement (on connecting) reads it: whatever
    /// the interleaving, an announced count is the one the lane queued last before it, so
    /// the last count queued, which the broker keeps, is the true one. The announcement
    /// gives the lane every chance to overtake it between reading and queuing: it spins
    /// (a bounded number of times) until the lane has changed the count once more, which
    /// the lane can do only if the count is not held while the announcement queues.
    @Test func announcedCountsAreQueuedInOrderWithTheLanesChanges() {
        let occupancy = Occupancy()
        let queued = Mutex<[(announced: Bool, count: Int)]>([])
        let changes = Atomic<Int>(0)
        let announcing = Atomic<Bool>(true)
        let announcements = 500
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            if thread == 0 {
                var round = 0
                while announcing.load(ordering: .acquiring) {
                    occupancy.apply([Self.change("a", inside: round % 2 == 0)]) { counts in
                        queued.withLock { queued in queued += counts.map { (false, $0.count ?? -1) } }
                    }
                    changes.add(1, ordering: .releasing)
                    round += 1
                }
            } else {
                for _ in 0..<announcements {
                    occupancy.counts(of: [Self.plaza]) { counts in
                        let seen = changes.load(ordering: .acquiring)
                        var spins = 0
                        while changes.load(ordering: .acquiring) == seen && spins < 100_000 { spins += 1 }
                        queued.withLock { queued in queued += counts.map { (true, $0) } }
                    }
                }
                announcing.store(false, ordering: .releasing)
            }
        }
        let all = queued.withLock { $0 }
        #expect(all.filter(\.announced).count == announcements)
        var last = 0
        var stale = 0
        for entry in all {
            if entry.announced {
                if entry.count != last { stale += 1 }
            } else {
                last = entry.count
            }
        }
        #expect(stale == 0, "an announcement queued a count older than one queued before it")
        var now: [Int] = []
        occupancy.counts(of: [Self.plaza]) { now = $0 }
        #expect(all.last?.count == now.first)
    }

    /// A device a lane still counted in a fence its set no longer has (the lane decided
    /// its entry with the earlier book, after the announcer forgot the fence) is taken out
    /// again, and the last one out empties the count's topic rather than leave a count.
    @Test func theLastDeviceOutOfARemovedFenceEmptiesItsCount() {
        let occupancy = Occupancy()
        occupancy.apply([Self.change("a", inside: true)]) { _ in }
        #expect(occupancy.prune(to: FenceBook()) == [Self.plaza])
        var queued: [Int?] = []
        occupancy.apply([Self.change("a", inside: true), Self.change("b", inside: true)]) { queued += $0.map(\.count) }
        #expect(queued == [1, 2], "stale entries")
        func removed(_ device: String) -> OccupancyChange {
            OccupancyChange(owner: "shared", fence: "plaza", device: device, inside: false, fenceRemoved: true)
        }
        occupancy.apply([removed("a"), removed("c")]) { queued += $0.map(\.count) }
        #expect(queued == [1, 2], "another is left in it; one never in it changes nothing")
        occupancy.apply([removed("b")]) { queued += $0.map(\.count) }
        #expect(queued == [1, 2, nil], "the last one out: emptied")
        occupancy.apply([removed("b")]) { queued += $0.map(\.count) }
        #expect(queued == [1, 2, nil], "once")
        #expect(occupancy.prune(to: FenceBook()).isEmpty, "forgotten")
    }

    /// A fence taken out of a set that keeps other fences is forgotten too, not only the
    /// fences of a set that is gone.
    @Test func aFenceGoneFromASetThatIsLeftIsForgotten() throws {
        let text = """
            {"devices": {"a/phone": []},
             "shared": [{"identifier": "park", "latitude": 52.6, "longitude": 13.4, "radius": 100, "eventType": "onEntry"}]}
            """
        let book = try #require(FenceFile(path: "fences.json").parse(Array(text.utf8)).book)
        let occupancy = Occupancy()
        occupancy.apply([Self.change("a", inside: true), OccupancyChange(owner: "shared", fence: "park", device: "a", inside: true)]) { _ in }
        #expect(occupancy.prune(to: book) == [Self.plaza])
        var counts: [Int] = []
        occupancy.counts(of: [Self.plaza, Occupancy.Key(owner: "shared", fence: "park")]) { counts = $0 }
        #expect(counts == [0, 1])
    }
}
