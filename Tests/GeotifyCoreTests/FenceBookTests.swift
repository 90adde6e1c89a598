import Testing
import GeotifyCore

@Suite("Fence book revisions")
struct FenceBookTests {
    func fence(_ id: String) -> Fence {
        Fence(identifier: id, region: .circle(center: Coordinate(latitude: 1, longitude: 1), radius: 10), note: "", eventType: .onEntry)
    }

    @Test func newIdentifiersGetTheNextRevisionAndKnownOnesKeepTheirs() {
        let first = FenceBook(devices: ["a": [fence("home")]]).revised(knownRevisions: [:], currentRevision: 0)
        #expect(first.revision == 1)
        #expect(first.fences(of: "a").map(\.addedRevision) == [1])

        let second = FenceBook(devices: ["a": [fence("home"), fence("work")], "b": [fence("home")]]).revised(from: first)
        #expect(second.revision == 2)
        #expect(second.fences(of: "a").map(\.addedRevision) == [1, 2])
        #expect(second.fences(of: "b").map(\.addedRevision) == [2])

        let unchanged = FenceBook(devices: second.devices).revised(from: second)
        #expect(unchanged.revision == 2)
        #expect(unchanged == second)
    }

    @Test func revisionsSurviveARoundTripThroughTheirPersistedForm() {
        let book = FenceBook(devices: ["a": [fence("home")]]).revised(knownRevisions: [:], currentRevision: 4)
        let restored = FenceBook(devices: ["a": [fence("home")]]).revised(knownRevisions: book.knownRevisions, currentRevision: book.revision)
        #expect(restored == book)
    }

    @Test func eventTypeSpellings() {
        #expect(EventType(name: "On Entry") == .onEntry)
        #expect(EventType(name: "On Exit") == .onExit)
        #expect(EventType(name: "onEntryAndExit") == [.onEntry, .onExit])
        #expect(EventType(name: "on entry") == nil)
        #expect(EventType([.onEntry, .onExit]).name == "onEntryAndExit")
    }
}
