import Foundation
@testable import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore
import GeotifyTestSupport
import Synchronization
import Testing

/// The fences in force and their file, without a broker: the file is looked at when the
/// test says (`reloadIfChanged(readContents: true)`, as on SIGHUP), and what would go to
/// `geotify/error` is kept by the test.
@Suite("LiveFenceBook")
struct LiveFenceBookTests {
    /// Two devices with a fence each, as in the announcer's tests.
    static let fences = FenceChangeAnnouncerTests.fences

    static let invalid = #"{"devices": {"alice/phone": [{"identifier": "home", "latitude": 95}]}}"#

    /// A live book loaded from a file holding `fences`, with what it reports.
    final class Fixture {
        let directory: URL
        let url: URL
        let counters = Counters()
        let reports = Reports()
        let book: LiveFenceBook

        init(_ fences: String = LiveFenceBookTests.fences) throws {
            directory = try makeTemporaryDirectory("live-fence-book")
            url = directory.appendingPathComponent("fences.json")
            try fences.write(to: url, atomically: true, encoding: .utf8)
            let store = try StateStore(directory: directory.appendingPathComponent("state").path)
            book = LiveFenceBook(
                file: FenceFile(path: url.path), store: store, logger: Logger(level: .error, sink: { _ in }),
                counters: counters, messages: OutboundMessages(topics: Topics()),
                report: reports.add)
            try book.load()
        }

        deinit { try? FileManager.default.removeItem(at: directory) }

        /// Writes `text` over the file, as an edit by hand.
        func edit(_ text: String) throws {
            try text.write(to: url, atomically: true, encoding: .utf8)
        }

        var reported: Int { reports.count }
    }

    /// What the book reported (to `geotify/error` in a bridge).
    final class Reports: Sendable {
        private let messages = Mutex<[OutboxMessage]>([])
        func add(_ message: OutboxMessage) { messages.withLock { $0.append(message) } }
        var count: Int { messages.withLock { $0.count } }
        var last: String? { messages.withLock { $0.last.map { String(decoding: $0.payload, as: UTF8.self) } } }
    }

    /// The report goes out whole on `geotify/error`: it names ten problems and counts the
    /// rest, as a refused command's reply does, instead of one per mistake in the file.
    @Test func aFileWithManyMistakesIsReportedInOneShortLine() throws {
        let fixture = try Fixture()
        let bad = (0..<18).map { #"{"identifier": "f\#($0)", "latitude": 95, "longitude": 13.4, "radius": 50, "eventType": "onEntry"}"# }
        try fixture.edit(#"{"devices": {"alice/phone": [\#(bad.joined(separator: ", "))]}}"#)
        _ = fixture.book.reloadIfChanged(readContents: true)
        let report = try #require(fixture.reports.last)
        #expect(report.contains(#"fence \"f9\""#))
        #expect(!report.contains(#"fence \"f10\""#))
        #expect(report.hasSuffix(#"; and 8 more"}"#))
    }

    static func fence(_ identifier: String) -> JSON {
        ["identifier": .string(identifier), "latitude": 52.5, "longitude": 13.4, "radius": 50, "eventType": "onEntry"]
    }

    static func add(_ identifier: String, to device: String) -> FenceWrite {
        FenceWrite(
            change: .add(device: device, fence: fence(identifier)), basis: nil,
            request: CommandRequest(device: device, topic: "geotify/cmd/\(device)"), reply: .changed(edit: false))
    }

    /// A file that does not validate is reported once, however often it is looked at;
    /// put back as it was and then spoiled the same way again, it is a new mistake and is
    /// reported again (not taken for the one already reported).
    @Test("a bad file is reported once per mistake: not on every look, but again once it was put right in between")
    func aBadFileIsReportedOncePerMistake() throws {
        let fixture = try Fixture()
        try fixture.edit(Self.invalid)
        #expect(fixture.book.reloadIfChanged(readContents: true) == nil)
        #expect(fixture.reported == 1)
        #expect(fixture.book.reloadIfChanged(readContents: true) == nil)
        #expect(fixture.reported == 1, "the same bad contents looked at again")
        #expect(fixture.counters.value(.errors(.fenceFile)) == 1)

        try fixture.edit(Self.fences)
        #expect(fixture.book.reloadIfChanged(readContents: true) == nil, "as it was: nothing changes")
        try fixture.edit(Self.invalid)
        #expect(fixture.book.reloadIfChanged(readContents: true) == nil)
        #expect(fixture.reported == 2, "the same mistake made again")
        #expect(fixture.counters.value(.errors(.fenceFile)) == 2)
        #expect(fixture.book.book.fences(of: "alice/phone").first?.note == "Welcome home", "the good fences stay in force")
    }

    /// A command's write applies to the file as it is now, not to the fences in force:
    /// a hand edit the bridge has not looked at yet is kept, in force and in the file.
    @Test("a command writes onto a hand edit not yet looked at, and keeps it")
    func aWriteKeepsAHandEditNotYetLookedAt() throws {
        let fixture = try Fixture()
        try fixture.edit(Self.fences.replacingOccurrences(of: "Van 7 is back", with: "Edited by hand"))
        let (results, change) = fixture.book.write([Self.add("gym", to: "alice/phone")], limits: FenceLimits())
        #expect(results.count == 1)
        #expect((try? results.first?.get()) != nil, "\(results)")
        #expect(change?.new.fences(of: "van/7").first?.note == "Edited by hand")
        #expect(fixture.book.book.fences(of: "van/7").first?.note == "Edited by hand")
        #expect(fixture.book.book.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
        let written = try String(contentsOf: fixture.url, encoding: .utf8)
        #expect(written.contains("Edited by hand") && written.contains("gym"))
    }

    /// Writes of one batch for the same device apply in order, each to the fences the
    /// ones before it left: two adds in one turn keep both fences.
    @Test("two writes for one device in one batch: the second applies to what the first left")
    func writesInABatchBuildOnEachOther() throws {
        let book = try #require(FenceFile(path: "fences.json").parse(Array(Self.fences.utf8)).book)
        let (results, changed) = LiveFenceBook.apply(
            [Self.add("gym", to: "alice/phone"), Self.add("pool", to: "alice/phone")], to: book, limits: FenceLimits())
        #expect(results.count == 2)
        #expect(results.allSatisfy { (try? $0.get()) != nil }, "\(results)")
        #expect(changed["alice/phone"]?.map(\.identifier) == ["home", "gym", "pool"])
    }
}
