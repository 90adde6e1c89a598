import Dispatch
import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyStore
import GeotifyTestSupport

/// What the announcer tells about the announcements asked of it, checked on a queue the
/// test holds: no broker, no timing.
@Suite("FenceChangeAnnouncer")
struct FenceChangeAnnouncerTests {
    /// An announcer whose work runs on `queue`; its publisher has no client and keeps what
    /// it is given.
    private func announcer(
        on queue: DispatchQueue = DispatchQueue(label: "test.announcements"), waypoints: OwnTracksWaypoints? = nil,
        occupancy: Occupancy = Occupancy(), discovery: HomeAssistantDiscovery? = nil
    ) -> FenceChangeAnnouncer {
        let logger = Logger(level: .error, sink: { _ in })
        let counters = Counters()
        let messages = OutboundMessages(topics: Topics())
        let health = StateHealth(logger: logger, counters: counters, messages: messages, uptime: { 0 })
        let publisher = Publisher(counters: counters, health: health, waitingLimit: 1_000)
        return FenceChangeAnnouncer(
            publisher: publisher, presence: PresenceMessages(topics: Topics()), occupancy: occupancy, discovery: discovery,
            waypoints: waypoints, announceLimit: 20, updates: LiveUpdates(), queue: queue)
    }

    @Test("not idle from the moment an announcement is asked for until it is handed over")
    func idleOnlyOnceEveryAnnouncementIsHandedOver() {
        let queue = DispatchQueue(label: "test.announcements")
        let announcer = announcer(on: queue)
        #expect(announcer.isIdle, "nothing asked for yet")
        // Held: the announcement cannot run, as one still being built or waiting for
        // the publisher's room cannot finish, while the publisher has nothing to send.
        queue.suspend()
        announcer.announceAll(FenceBook())
        announcer.announceAll(FenceBook())
        #expect(!announcer.isIdle, "two announcements asked for, none handed over")
        queue.resume()
        announcer.waitUntilAnnounced()
        #expect(announcer.isIdle, "both handed over")
    }

    /// Home Assistant's birth message forty times while a whole announcement waits to
    /// begin: they join it, and the shared fence's count is announced once, from the
    /// newest book, not forty times.
    @Test("whole announcements asked for while one waits join it")
    func wholeAnnouncementsAskedForWhileOneWaitsJoinIt() throws {
        let queue = DispatchQueue(label: "test.announcements")
        let logger = Logger(level: .error, sink: { _ in })
        let counters = Counters()
        let health = StateHealth(logger: logger, counters: counters, messages: OutboundMessages(topics: Topics()), uptime: { 0 })
        let publisher = Publisher(counters: counters, health: health, waitingLimit: 1_000)
        let announcer = FenceChangeAnnouncer(
            publisher: publisher, presence: PresenceMessages(topics: Topics()), occupancy: Occupancy(), discovery: nil,
            waypoints: nil, announceLimit: 20, updates: LiveUpdates(), queue: queue)
        let one = try Self.book(#"{"devices": {"alice/phone": []}, "shared": [{"identifier": "sa", "latitude": 20, "longitude": 20, "radius": 100, "eventType": "onEntryAndExit"}]}"#)
        queue.suspend()
        for _ in 0..<39 { announcer.announceAll(one) }
        announcer.announceAll(try Self.book(Self.shared))
        #expect(!announcer.isIdle)
        queue.resume()
        announcer.waitUntilAnnounced()
        #expect(announcer.isIdle)
        #expect(publisher.unacknowledged == 3, "the newest book's three counts, once")
        announcer.announceAll(one)
        announcer.waitUntilAnnounced()
        #expect(publisher.unacknowledged == 4, "one asked for after the last began is announced")
    }

    static let fences = """
        { "devices": {
            "alice/phone": [
              { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
                "note": "Welcome home", "eventType": "onEntryAndExit" } ],
            "van/7": [
              { "identifier": "depot", "latitude": 48.1374, "longitude": 11.5755, "radius": 250,
                "note": "Van 7 is back", "eventType": "onEntry" } ] } }
        """

    static func book(_ text: String) throws -> FenceBook {
        try #require(FenceFile(path: "fences.json").parse(Array(text.utf8)).book)
    }

    /// A device taken out of the file, when nothing else changes, loses its retained
    /// topics: it is among the devices whose own fences changed, though the new book
    /// has no fences of it at all.
    @Test("a device removed, and nothing else: its retained topics are cleared")
    func aRemovedDeviceIsCleared() throws {
        let old = try Self.book(Self.fences)
        let new = try Self.book(#"{"devices": {"alice/phone": [{"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "Welcome home", "eventType": "onEntryAndExit"}]}}"#)
        let messages = announcer().messages(for: LiveFenceBook.Change(old: old, new: new))
        let cleared = messages.filter { $0.payload.isEmpty && $0.retain }.map(\.topic)
        #expect(cleared.contains { $0.contains("van/7") }, "\(cleared)")
        #expect(!cleared.contains { $0.contains("alice/phone") }, "\(cleared)")
    }

    /// Fences pushed to the OwnTracks apps go only to the devices whose fences changed,
    /// not to every device on each change.
    @Test("waypoints are pushed only to the devices whose fences changed")
    func waypointsOnlyForChangedDevices() throws {
        let old = try Self.book(Self.fences)
        let new = try Self.book(Self.fences.replacingOccurrences(of: "Welcome home", with: "Home again"))
        let messages = announcer(waypoints: OwnTracksWaypoints(topics: OwnTracksTopics()))
            .messages(for: LiveFenceBook.Change(old: old, new: new))
        #expect(messages.map(\.topic).filter { $0.hasPrefix("owntracks/") } == ["owntracks/alice/phone/cmd"])
    }

    /// A command's write says which devices it changed (`Change.devices`), so the books
    /// are not compared device by device: what is announced is the same as comparing
    /// them finds.
    @Test("a change that names its devices is announced as comparing the books would announce it")
    func aChangeNamingItsDevicesIsAnnouncedTheSame() throws {
        let old = try Self.book(Self.fences)
        let new = try Self.book(Self.fences.replacingOccurrences(of: #""identifier": "home""#, with: #""identifier": "gym""#))
        let announcer = announcer(waypoints: OwnTracksWaypoints(topics: OwnTracksTopics()))
        let compared = announcer.messages(for: LiveFenceBook.Change(old: old, new: new))
        let named = announcer.messages(for: LiveFenceBook.Change(old: old, new: new, devices: ["alice/phone"]))
        #expect(!compared.isEmpty)
        #expect(named.map(\.topic) == compared.map(\.topic))
        #expect(named.map(\.payload) == compared.map(\.payload))
        #expect(named.contains { $0.topic == "owntracks/alice/phone/cmd" })
    }

    /// Three shared fences, and a device the file names.
    static let shared = """
        { "devices": { "alice/phone": [] },
          "shared": [
            { "identifier": "sa", "latitude": 20, "longitude": 20, "radius": 100, "eventType": "onEntryAndExit" },
            { "identifier": "sb", "latitude": 21, "longitude": 20, "radius": 100, "eventType": "onEntryAndExit" },
            { "identifier": "sc", "latitude": 22, "longitude": 20, "radius": 100, "eventType": "onEntryAndExit" } ] }
        """

    /// Every removed shared fence's retained count is emptied: one nobody was ever inside
    /// (announced at 0 by `announceAll`, never counted), one whose count fell back to 0,
    /// and one with a device inside.
    @Test("a removed shared fence's occupancy is emptied, at 0 too")
    func aRemovedSharedFencesOccupancyIsEmptiedAtZeroToo() throws {
        let occupancy = Occupancy()
        occupancy.apply([
            OccupancyChange(owner: "shared", fence: "sb", device: "occ/one", inside: true),
            OccupancyChange(owner: "shared", fence: "sb", device: "occ/one", inside: false),
            OccupancyChange(owner: "shared", fence: "sc", device: "occ/two", inside: true),
        ]) { _ in }
        let messages = announcer(occupancy: occupancy).messages(
            for: LiveFenceBook.Change(old: try Self.book(Self.shared), new: try Self.book(#"{"devices": {"alice/phone": []}}"#)))
        let cleared = messages.filter { $0.topic.hasPrefix("geotify/occupancy/") }
        #expect(cleared.map(\.topic) == ["geotify/occupancy/shared/sa", "geotify/occupancy/shared/sb", "geotify/occupancy/shared/sc"])
        #expect(cleared.allSatisfy { $0.payload.isEmpty && $0.retain && $0.qos == 1 })
    }

    /// The Home Assistant side of removed shared fences: the occupancy entities of each
    /// fence and the presence entity of each device the file names lose their configs,
    /// before any retained topic is emptied. Devices the file does not name have no
    /// entities (`announceAll` announces the named ones), so nothing is left of them.
    @Test("removed shared fences lose their Home Assistant configs first")
    func removedSharedFencesLoseTheirConfigsFirst() throws {
        let discovery = HomeAssistantDiscovery(topics: Topics())
        let old = try Self.book(Self.shared)
        let new = try Self.book(#"{"devices": {"alice/phone": []}}"#)
        let announced = discovery.announcement(devices: old.announcedFences(limit: 20), shared: old.announcedSharedFences(limit: 20))
        let messages = announcer(discovery: discovery).messages(for: LiveFenceBook.Change(old: old, new: new))
        let removedConfigs = Set(messages.filter { $0.topic.hasPrefix("homeassistant/") && $0.payload.isEmpty }.map(\.topic))
        let remaining = discovery.announcement(devices: new.announcedFences(limit: 20), shared: new.announcedSharedFences(limit: 20))
        let gone = Set(announced.map(\.topic)).subtracting(remaining.map(\.topic))
        #expect(gone.count == 3 * 3, "each fence's occupancy sensor and occupied binary sensor, and alice's presence")
        #expect(removedConfigs == gone)
        let firstEmptied = try #require(messages.firstIndex { $0.topic.hasPrefix("geotify/") && $0.payload.isEmpty })
        #expect(messages[..<firstEmptied].allSatisfy { $0.topic.hasPrefix("homeassistant/") })
        #expect(old.announcedFences(limit: 20).keys.sorted() == ["alice/phone"], "only the devices the file names have entities")
    }
}
