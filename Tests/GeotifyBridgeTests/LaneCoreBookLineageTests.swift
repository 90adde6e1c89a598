import GeotifyBridge
import GeotifyCore
import Testing

/// A command or an edit of the file changes a few devices' fences (`FenceBook.replacing`,
/// `FenceBook.inheriting`); the lane then looks only at those devices
/// (`FenceBookLineage`) for fences gone, admission places and timer deadlines, not at
/// every device it keeps, and decides for them as a whole look would.
@Suite("Lane core: books changed by commands and edits")
struct LaneCoreBookLineageTests {
    static let others = (0..<20).map { "u\($0)/phone" }

    /// Alice, Bob, Carol and 20 others, each with a home with a dwell of `dwell` seconds.
    static func fences(alice: String = home(300), bob: String = home(300)) -> String {
        let others = Self.others.map { #""\#($0)": [\#(home(300))]"# }.joined(separator: ", ")
        return """
            { "devices": { "alice/phone": [\(alice)], "bob/phone": [\(bob)], "carol/phone": [\(home(300))], \(others) } }
            """
    }

    static func home(_ dwell: Int) -> String {
        #"{ "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "", "eventType": ["onEntry", "onDwell"], "dwell": \#(dwell) }"#
    }

    static let gym = #"{ "identifier": "gym", "latitude": 52.50, "longitude": 13.30, "radius": 100, "note": "", "eventType": "onEntry" }"#

    @Test func twoCommandsBetweenLooksAreDecidedForTheirDevicesOnly() throws {
        var lane = try LaneFixture(fences: Self.fences())
        let everyone = ["alice/phone", "bob/phone", "carol/phone"] + Self.others
        for device in everyone { _ = lane.ownTracks(device, 52.50, 13.405) }
        lane.now += 60
        for device in everyone { _ = lane.ownTracks(device, 52.52, 13.405) }
        let entry = lane.now
        _ = lane.advance(1)
        let before = lane.core.devicesReconsidered
        // Two commands before the lane's next look: Alice's home goes, Bob's dwell shortens.
        let edited = try LaneFixture.parse(Self.fences(alice: Self.gym, bob: Self.home(60)), settings: lane.settings)
        lane.book = lane.book.replacing(devices: ["alice/phone": edited.fences(of: "alice/phone")])
        lane.book = lane.book.replacing(devices: ["bob/phone": edited.fences(of: "bob/phone")])
        let looked = lane.advance(1)
        // Fences gone, admission and deadlines: two devices each, not 23.
        #expect(lane.core.devicesReconsidered - before == 6)
        #expect(looked.outboxText("geotify/presence/alice/phone/home") == "", "Alice's home is gone")
        #expect(lane.core.state(of: "alice/phone")?.fences.map(\.fence) == [])
        #expect(lane.core.state(of: "bob/phone")?.fences.map(\.fence) == ["home"])
        // Bob's dwell is timed by its new length, everyone else's as before.
        let dwelled = lane.advance(entry + 60 - lane.now)
        #expect(dwelled.events.map { $0["device"] as? String } == ["bob/phone"])
        let rest = lane.advance(entry + 300 - lane.now)
        #expect(Set(rest.events.compactMap { $0["device"] as? String }) == Set(everyone).subtracting(["alice/phone", "bob/phone"]))
    }

    /// An edit of the file that changes one device's fences: the lane looks at that
    /// device alone (fences gone, admission, deadlines), and decides for it as a whole
    /// look would.
    @Test func aFileEditIsLookedAtForTheDevicesItChanged() throws {
        var lane = try LaneFixture(fences: Self.fences())
        for device in ["alice/phone", "bob/phone", "carol/phone"] + Self.others { _ = lane.ownTracks(device, 52.52, 13.405) }
        _ = lane.advance(1)
        let before = lane.core.devicesReconsidered
        try lane.edit(Self.fences(alice: Self.gym))
        let looked = lane.advance(1)
        #expect(lane.core.devicesReconsidered - before == 3)
        #expect(looked.outboxText("geotify/presence/alice/phone/home") == "", "Alice's home is gone")
        #expect(lane.core.state(of: "alice/phone")?.fences.map(\.fence) == [])
        #expect(lane.core.state(of: "bob/phone")?.fences.map(\.fence) == ["home"])
    }

    /// An edit that adds a shared set may change what every device is evaluated against:
    /// the lane looks at every device.
    @Test func aFileEditOfTheSharedSetsIsLookedAtWhole() throws {
        var lane = try LaneFixture(fences: Self.fences())
        for device in ["alice/phone", "bob/phone", "carol/phone"] + Self.others { _ = lane.ownTracks(device, 52.50, 13.405) }
        _ = lane.advance(1)
        let before = lane.core.devicesReconsidered
        var withShared = Self.fences()
        withShared.removeLast(2)
        try lane.edit(withShared + #", "shared": [\#(Self.gym)] }"#)
        _ = lane.advance(1)
        #expect(lane.core.devicesReconsidered - before == 3 * 23)
    }
}
