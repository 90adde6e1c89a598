import GeotifyCore
import Testing

/// A book made by `replacing(devices:)`, or read again with groups and shared sets as
/// they were, names the devices whose fences may differ from its forebears
/// (`FenceBookLineage`), so a lane looks only at those; a book made any other way names
/// none, and the lane looks at every device.
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

    /// The file read again (`revised(from:)`, `inheriting(from:)`): the devices whose own
    /// fences differ, added or gone, are a step of the lineage, and every other device
    /// keeps what it was evaluated against.
    @Test func aBookReadAgainNamesTheDevicesWhoseFencesDiffer() {
        let replaced = Self.book.replacing(devices: ["alice/phone": [Self.fence("gym")]])
        var edited = replaced.devices
        edited["bob/phone"] = [Self.fence("home"), Self.fence("work")]
        edited["carol/phone"] = nil
        edited["dave/phone"] = [Self.fence("home")]
        let read = FenceBook(devices: edited).revised(from: replaced)
        #expect(read.lineage.devicesChanged(since: replaced.edition) == ["bob/phone", "carol/phone", "dave/phone"])
        #expect(read.lineage.devicesChanged(since: Self.book.edition) == ["alice/phone", "bob/phone", "carol/phone", "dave/phone"])
        #expect(read.deviceFences(of: "alice/phone") === replaced.deviceFences(of: "alice/phone"), "unchanged: the very same")
        #expect(read.deviceFences(of: "bob/phone") !== replaced.deviceFences(of: "bob/phone"))
        #expect(read.fences(of: "bob/phone").map(\.identifier) == ["home", "work"])
        #expect(!read.knows("carol/phone") && read.knows("dave/phone"))
        #expect(read.fences(of: "bob/phone")[0].addedRevision == replaced.fences(of: "bob/phone")[0].addedRevision, "revisions carried over")

        let unchanged = FenceBook(devices: replaced.devices).revised(from: replaced)
        #expect(unchanged.lineage.devicesChanged(since: replaced.edition) == [])
    }

    /// Polygon fences are compared by their rings, not by the objects that hold them: a
    /// polygon read again as it was leaves its device out of the lineage's step, one with
    /// a vertex moved or a hole added puts it in.
    @Test func aPolygonReadAgainAsItWasIsUnchanged() throws {
        let outer = [(52.50, 13.40), (52.50, 13.42), (52.52, 13.42), (52.52, 13.40)].map { Coordinate(latitude: $0.0, longitude: $0.1) }
        let hole = [(52.505, 13.405), (52.505, 13.41), (52.51, 13.41)].map { Coordinate(latitude: $0.0, longitude: $0.1) }
        func book(_ outer: [Coordinate], holes: [[Coordinate]] = []) throws -> FenceBook {
            let park = Fence(identifier: "park", region: .polygon(try Polygon(outer: outer, holes: holes)), note: "", eventType: [.onEntry])
            return FenceBook(devices: ["alice/phone": [park], "bob/phone": [Self.fence("home")]])
        }
        let first = try book(outer)
        let same = try book(outer).revised(from: first)
        #expect(same.lineage.devicesChanged(since: first.edition) == [])
        var moved = outer
        moved[2] = Coordinate(latitude: 52.53, longitude: 13.42)
        #expect(try book(moved).revised(from: first).lineage.devicesChanged(since: first.edition) == ["alice/phone"])
        #expect(try book(outer, holes: [hole]).revised(from: first).lineage.devicesChanged(since: first.edition) == ["alice/phone"])
    }

    /// A group or a shared set that changes may change what any device is evaluated
    /// against: the book read again has no forebear, and a lane looks at every device.
    @Test func aBookReadAgainWithOtherGroupsOrSharedSetsHasNoForebears() {
        let shared = ["shared": SharedFences(owner: "shared", fences: [Self.fence("station")])]
        let withShared = FenceBook(devices: Self.book.devices, shared: shared).revised(from: Self.book)
        #expect(withShared.lineage.devicesChanged(since: Self.book.edition) == nil)
        let grouped = FenceBook(devices: Self.book.devices, groups: ["family": ["alice/phone"]]).revised(from: Self.book)
        #expect(grouped.lineage.devicesChanged(since: Self.book.edition) == nil)
        let same = FenceBook(devices: withShared.devices, shared: ["shared": SharedFences(owner: "shared", fences: [Self.fence("station")])])
            .revised(from: withShared)
        #expect(same.lineage.devicesChanged(since: withShared.edition) == [], "equal shared sets are the same")
        #expect(same.shared["shared"] === withShared.shared["shared"])
        #expect(FenceBook(devices: Self.book.devices).lineage.devicesChanged(since: Self.book.edition) == nil, "a book made anew has none")
    }

    /// An edit that changes more devices than a lineage remembers gives no forebear.
    @Test func aBookReadAgainWithTooManyChangesHasNoForebears() {
        func read(adding count: Int) -> FenceBook {
            var devices = Self.book.devices
            for number in 0..<count { devices["u\(number)/phone"] = [Self.fence("home")] }
            return FenceBook(devices: devices).revised(from: Self.book)
        }
        #expect(read(adding: FenceBookLineage.maximumChanged).lineage.devicesChanged(since: Self.book.edition)?.count == FenceBookLineage.maximumChanged)
        #expect(read(adding: FenceBookLineage.maximumChanged + 1).lineage.devicesChanged(since: Self.book.edition) == nil)
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
