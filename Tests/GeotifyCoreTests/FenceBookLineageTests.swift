import GeotifyCore
import Testing

/// A book made by `replacing(devices:)` names the devices whose fences may differ from
/// its forebears (`FenceBookLineage`), so a lane looks only at those; a book made any
/// other way names none, and the lane looks at every device.
@Suite("Fence book lineage")
struct FenceBookLineageTests {
    static func fence(_ identifier: String) -> Fence {
        Fence(identifier: identifier, region: .circle(center: Coordinate(latitude: 52.52, longitude: 13.405), radius: 100), note: "", eventType: [.onEntry])
    }

    static let book = FenceBook(devices: ["alice/phone": [fence("home")], "bob/phone": [fence("home")], "carol/phone": [fence("home")]])

    @Test func eachStepAddsItsDevicesToEveryForebear() {
        let first = Self.book.replacing(devices: ["alice/phone": [Self.fence("gym")]])
        let second = first.replacing(devices: ["bob/phone": []])
        #expect(first.lineage.devicesChanged(since: Self.book.edition) == ["alice/phone"])
        #expect(second.lineage.devicesChanged(since: first.edition) == ["bob/phone"])
        #expect(second.lineage.devicesChanged(since: Self.book.edition) == ["alice/phone", "bob/phone"])
        #expect(second.lineage.devicesChanged(since: second.edition) == nil, "a book is not its own forebear")
        // What the lineage leaves out is the very same: carol's fences and what she is
        // evaluated against.
        #expect(second.deviceFences(of: "carol/phone") === Self.book.deviceFences(of: "carol/phone"))
        #expect(second.deviceFences(of: "alice/phone") !== Self.book.deviceFences(of: "alice/phone"))
    }

    @Test func aBookReadAgainHasNoForebears() {
        let replaced = Self.book.replacing(devices: ["alice/phone": [Self.fence("gym")]])
        let read = FenceBook(devices: replaced.devices).revised(from: replaced)
        #expect(read.lineage.devicesChanged(since: replaced.edition) == nil)
        #expect(read.lineage.devicesChanged(since: Self.book.edition) == nil)
        #expect(FenceBook(devices: Self.book.devices).lineage.devicesChanged(since: Self.book.edition) == nil)
    }

    @Test func onlyTheNearestForebearsAreRemembered() {
        var books = [Self.book]
        for step in 0...FenceBookLineage.depth {
            books.append(books[step].replacing(devices: ["alice/phone": [Self.fence("f\(step)")]]))
        }
        let last = books[FenceBookLineage.depth + 1]
        #expect(last.lineage.devicesChanged(since: books[1].edition) == ["alice/phone"], "\(FenceBookLineage.depth) steps back")
        #expect(last.lineage.devicesChanged(since: books[0].edition) == nil, "\(FenceBookLineage.depth + 1) steps back is too far")
    }

    @Test func aChangeOfTooManyDevicesIsNotRemembered() {
        let many = Dictionary(uniqueKeysWithValues: (0...FenceBookLineage.maximumChanged).map { ("u\($0)/phone", [Self.fence("home")]) })
        let large = Self.book.replacing(devices: many)
        #expect(large.lineage.devicesChanged(since: Self.book.edition) == nil)
        let small = large.replacing(devices: ["alice/phone": []])
        #expect(small.lineage.devicesChanged(since: large.edition) == ["alice/phone"])
        #expect(small.lineage.devicesChanged(since: Self.book.edition) == nil)
    }
}
