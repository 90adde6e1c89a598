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
        let store: StateStore

        init(_ fences: String = LiveFenceBookTests.fences, maximumBytes: Int = 256 << 20) throws {
            directory = try makeTemporaryDirectory("live-fence-book")
            url = directory.appendingPathComponent("fences.json")
            try fences.write(to: url, atomically: true, encoding: .utf8)
            (book, store) = try Self.loaded(url, in: directory, counters: counters, reports: reports, maximumBytes: maximumBytes)
        }

        /// A fence directory holding the devices of `LiveFenceBookTests.fences`, a file each.
        init(directoryOf fences: String, maximumBytes: Int = 256 << 20) throws {
            directory = try makeTemporaryDirectory("live-fence-book")
            url = directory.appendingPathComponent("fences")
            try FileManager.default.createDirectory(at: url.appendingPathComponent("devices"), withIntermediateDirectories: true)
            let whole = try #require(FenceFile(path: "fences.json").parse(Array(fences.utf8)).book)
            for (device, fences) in whole.devices {
                try Data(FenceFile.contents(of: FenceBook(devices: [device: fences]))).write(to: Self.deviceFile(device, in: url))
            }
            (book, store) = try Self.loaded(url, in: directory, counters: counters, reports: reports, maximumBytes: maximumBytes)
        }

        /// The file of `device` in the fence directory.
        func deviceFile(_ device: String) -> URL { Self.deviceFile(device, in: url) }

        /// The file of `device` in the fence directory `root`.
        static func deviceFile(_ device: String, in root: URL) -> URL {
            root.appendingPathComponent("devices/\(device.replacingOccurrences(of: "/", with: "%2F")).json")
        }

        private static func loaded(
            _ url: URL, in directory: URL, counters: Counters, reports: Reports, maximumBytes: Int
        ) throws -> (LiveFenceBook, StateStore) {
            let store = try StateStore(directory: directory.appendingPathComponent("state").path)
            let book = LiveFenceBook(
                file: FenceFile(path: url.path, maximumBytes: maximumBytes), store: store, logger: Logger(level: .error, sink: { _ in }),
                counters: counters, messages: OutboundMessages(topics: Topics()),
                report: reports.add)
            try book.load()
            return (book, store)
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
        #expect(change?.devices == nil, "onto a hand edit any device may have changed")
        #expect(fixture.book.book.fences(of: "van/7").first?.note == "Edited by hand")
        #expect(fixture.book.book.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
        let written = try String(contentsOf: fixture.url, encoding: .utf8)
        #expect(written.contains("Edited by hand") && written.contains("gym"))
    }

    /// A hand edit that broke the file, not looked at yet when a command comes: the
    /// command is refused as `invalid_file`, naming the mistake, and the file stays as its
    /// author left it (a write onto the fences in force would throw their work away).
    @Test("a command onto a hand edit that broke the file, not yet looked at, is refused and the edit kept")
    func aWriteOntoABrokenHandEditIsRefusedAndKeepsIt() throws {
        let fixture = try Fixture()
        let broken = Self.fences.replacingOccurrences(of: #""radius": 250"#, with: #""radius": -250"#)
        #expect(broken != Self.fences)
        try fixture.edit(broken)
        let (results, change) = fixture.book.write([Self.add("gym", to: "alice/phone")], limits: FenceLimits())
        #expect(change == nil)
        guard case .failure(let error)? = results.first else {
            Issue.record("the change was not refused: \(results)")
            return
        }
        #expect(error.code == .invalidFile)
        #expect(error.message.hasPrefix("the fence file \(fixture.url.path) is not valid, so it cannot be changed: "), "\(error.message)")
        #expect(error.message.contains("radius"), "\(error.message)")
        #expect(try String(contentsOf: fixture.url, encoding: .utf8) == broken, "the hand edit, byte for byte")
        #expect(fixture.book.book.fences(of: "alice/phone").map(\.identifier) == ["home"], "the fences in force stay")
    }

    /// A fence added by hand and written with a command's change before it was looked at
    /// has its revision saved, as a reload would save it: after a restart it is not new
    /// again.
    @Test("a hand edit a command's write took in has its fences' revisions saved")
    func aHandEditTakenInByAWriteHasItsRevisionsSaved() throws {
        let fixture = try Fixture()
        let yard = #"{ "identifier": "yard", "latitude": 48.2, "longitude": 11.6, "radius": 50, "eventType": "onEntry" }"#
        try fixture.edit(Self.fences.replacingOccurrences(of: #""eventType": "onEntry" } ]"#, with: #""eventType": "onEntry" }, \#(yard) ]"#))
        let (results, change) = fixture.book.write([Self.add("gym", to: "alice/phone")], limits: FenceLimits())
        #expect((try? results.first?.get()) != nil, "\(results)")
        #expect(change?.new.fences(of: "van/7").map(\.identifier) == ["depot", "yard"])
        let saved = try fixture.store.loadRevisions()
        #expect(saved.known["van/7"]?["yard"] != nil, "\(saved.known)")
        #expect(saved.known["alice/phone"]?["gym"] != nil, "\(saved.known)")
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

    /// A command whose change would take the file past `maximumFenceFileBytes` is
    /// refused (`fence_limit`), nothing written: the bridge would refuse its own file at
    /// the next start. In a fence directory the files count together, the ones the
    /// change did not read too.
    @Test("a change that would take the fences past maximumFenceFileBytes is refused and writes nothing")
    func aChangePastTheSizeLimitIsRefused() throws {
        let size = Self.fences.utf8.count
        let fixture = try Fixture(maximumBytes: size + 40)
        let before = try Data(contentsOf: fixture.url)
        let (results, change) = fixture.book.write([Self.add("gym", to: "alice/phone")], limits: FenceLimits())
        #expect(change == nil)
        let error = try #require(results.first.flatMap { result -> FenceChangeError? in if case .failure(let error) = result { error } else { nil } })
        #expect(error.code == .fenceLimit)
        #expect(error.message.contains("at most \(size + 40) are accepted (maximumFenceFileBytes), so nothing was written"), "\(error)")
        #expect(try Data(contentsOf: fixture.url) == before)

        let directory = try Fixture(directoryOf: Self.fences)
        let total = try FileManager.default.contentsOfDirectory(at: directory.url.appendingPathComponent("devices"), includingPropertiesForKeys: nil)
            .reduce(0) { $0 + (try Data(contentsOf: $1)).count }
        let limited = try Fixture(directoryOf: Self.fences, maximumBytes: total + 40)
        let alice = try Data(contentsOf: limited.deviceFile("alice/phone"))
        let (refused, none) = limited.book.write([Self.add("gym", to: "alice/phone")], limits: FenceLimits())
        #expect(none == nil)
        let directoryError = try #require(refused.first.flatMap { result -> FenceChangeError? in if case .failure(let error) = result { error } else { nil } })
        #expect(directoryError.code == .fenceLimit)
        #expect(directoryError.message.contains("the fence files would be"), "\(directoryError)")
        #expect(try Data(contentsOf: limited.deviceFile("alice/phone")) == alice)
    }

    // MARK: A fence directory: a change reads the files it depends on

    /// In a fence directory each device's file is written on its own: one that fails
    /// (here a link into a directory that is gone) fails only its device's command, and
    /// the others, whose files were written, are told so and put in force.
    @Test("in a fence directory a device's file that fails to be written fails only that device's change")
    func aDirectoryWriteFailsOnlyTheDeviceWhoseFileFailed() throws {
        let fixture = try Fixture(directoryOf: Self.fences)
        let gone = fixture.directory.appendingPathComponent("gone/bob.json").path
        #expect(symlink(gone, fixture.deviceFile("bob/phone").path) == 0)
        let (results, change) = fixture.book.write([Self.add("gym", to: "alice/phone"), Self.add("gym", to: "bob/phone")], limits: FenceLimits())
        #expect(results.count == 2)
        #expect((try? results[0].get()) != nil, "alice's file was written: \(results)")
        guard case .failure(let error) = results[1] else {
            Issue.record("bob's file could not be written, yet his change succeeded")
            return
        }
        #expect(error.code == .io)
        #expect(error.message.contains(fixture.deviceFile("bob/phone").path), "\(error)")
        #expect(change?.new.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
        #expect(change?.devices == ["alice/phone"])
        #expect(fixture.book.book.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
        #expect(fixture.book.book.devices["bob/phone"] == nil)
        #expect(try String(contentsOf: fixture.deviceFile("alice/phone"), encoding: .utf8).contains("gym"))
    }

    /// In a fence directory a change reads its device's file and the shared file, not
    /// every device's: another device's file, broken by hand and not looked at yet, does
    /// not stop it (it is refused when the directory is next looked at, and the good
    /// fences, with the change, stay in force).
    @Test("in a fence directory a change reads only its device's file: another device's broken file does not stop it")
    func aDirectoryChangeReadsOnlyItsDevicesFile() throws {
        let fixture = try Fixture(directoryOf: Self.fences)
        try "{ not json".write(to: fixture.deviceFile("van/7"), atomically: true, encoding: .utf8)
        let (results, change) = fixture.book.write([Self.add("gym", to: "alice/phone")], limits: FenceLimits())
        #expect((try? results.first?.get()) != nil, "\(results)")
        #expect(change?.new.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
        #expect(change?.devices == ["alice/phone"], "onto the book in force only the command's device changed")
        let written = try String(contentsOf: fixture.deviceFile("alice/phone"), encoding: .utf8)
        #expect(written.contains("gym"))
        #expect(try String(contentsOf: fixture.deviceFile("van/7"), encoding: .utf8) == "{ not json", "another device's file is left as it is")

        #expect(fixture.book.reloadIfChanged() == nil, "the broken file is noticed at the next look")
        #expect(fixture.reported == 1)
        #expect(fixture.book.book.fences(of: "van/7").map(\.identifier) == ["depot"])
        #expect(fixture.book.book.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
    }

    /// The device's own file edited by hand and not looked at yet: the change applies to
    /// the file as it is now, as in a single file, and the edit is kept.
    @Test("in a fence directory a change writes onto a hand edit of its device's file not yet looked at")
    func aDirectoryChangeKeepsAHandEditOfItsDevice() throws {
        let fixture = try Fixture(directoryOf: Self.fences)
        let edited = Self.fences.replacingOccurrences(of: "Welcome home", with: "Edited by hand")
        let book = try #require(FenceFile(path: "fences.json").parse(Array(edited.utf8)).book)
        try Data(FenceFile.contents(of: FenceBook(devices: ["alice/phone": book.fences(of: "alice/phone")]))).write(to: fixture.deviceFile("alice/phone"))
        let (results, change) = fixture.book.write([Self.add("gym", to: "alice/phone")], limits: FenceLimits())
        #expect((try? results.first?.get()) != nil, "\(results)")
        #expect(change?.new.fences(of: "alice/phone").first?.note == "Edited by hand")
        #expect(fixture.book.book.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
        #expect(try String(contentsOf: fixture.deviceFile("alice/phone"), encoding: .utf8).contains("Edited by hand"))
    }

    /// Another device's file replaced by hand before the change: the change does not
    /// read it, so it must not take the directory's new size and time for its own, or
    /// the edit would wait for the next read of the contents; the next look finds it.
    @Test("in a fence directory a hand edit of another device's file made before a change is found at the next look")
    func aDirectoryChangeLeavesAnotherDevicesEditToTheNextLook() throws {
        let fixture = try Fixture(directoryOf: Self.fences)
        let edited = try String(contentsOf: fixture.deviceFile("van/7"), encoding: .utf8).replacingOccurrences(of: "Van 7 is back", with: "Edited by hand")
        try edited.write(to: fixture.deviceFile("van/7"), atomically: true, encoding: .utf8)
        let (results, change) = fixture.book.write([Self.add("gym", to: "alice/phone")], limits: FenceLimits())
        #expect((try? results.first?.get()) != nil, "\(results)")
        #expect(change?.new.fences(of: "van/7").first?.note == "Van 7 is back", "the change did not read van/7's file")
        let next = fixture.book.reloadIfChanged()
        #expect(next?.new.fences(of: "van/7").first?.note == "Edited by hand")
        #expect(fixture.book.book.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
    }

    /// Writes of several devices in one turn: only the files of the devices whose fences
    /// changed are written; a device whose change was refused keeps its file byte for
    /// byte, as its author wrote it.
    @Test("in a fence directory a device whose change was refused keeps its file as written by hand")
    func aDirectoryTurnWritesOnlyTheDevicesThatChanged() throws {
        let fixture = try Fixture(directoryOf: Self.fences)
        let byHand = #"{"devices": {"alice/phone": [{"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntry"}]}}"#
        try byHand.write(to: fixture.deviceFile("alice/phone"), atomically: true, encoding: .utf8)
        #expect(fixture.book.reloadIfChanged(readContents: true) != nil)
        let refused = FenceWrite(
            change: .delete(device: "alice/phone", identifier: "nowhere"), basis: nil,
            request: CommandRequest(device: "alice/phone", topic: "geotify/cmd/alice/phone"), reply: .deleted)
        let (results, change) = fixture.book.write([refused, Self.add("yard", to: "van/7")], limits: FenceLimits())
        #expect(results.count == 2)
        #expect((try? results[0].get()) == nil, "the delete of a fence alice/phone does not have is refused")
        #expect((try? results[1].get()) != nil, "\(results)")
        #expect(change?.new.fences(of: "van/7").map(\.identifier) == ["depot", "yard"])
        #expect(try String(contentsOf: fixture.deviceFile("alice/phone"), encoding: .utf8) == byHand)
    }

    /// A fence file that cannot be read when a command comes (here a FIFO, or a file past
    /// `maximumFenceFileBytes`, put there since the last look) was refused as `io`, while
    /// `geotify fences` and the console's import refuse it as `invalid_file`, as a
    /// missing or invalid file is (`io` is for a write that fails); now as `invalid_file`
    /// too, naming the file and why, in a single file and in a fence directory alike.
    @Test("a change to a fence file that cannot be read is refused as invalid_file, as geotify fences refuses it")
    func aChangeToAnUnreadableFenceFileIsRefusedAsInvalidFile() throws {
        func refusal(_ fixture: Fixture) throws -> FenceChangeError {
            let (results, change) = fixture.book.write([Self.add("gym", to: "alice/phone")], limits: FenceLimits())
            #expect(change == nil)
            return try #require(results.first.flatMap { result -> FenceChangeError? in if case .failure(let error) = result { error } else { nil } })
        }
        let fifo = try Fixture()
        try FileManager.default.removeItem(at: fifo.url)
        #expect(mkfifo(fifo.url.path, 0o600) == 0)
        let notRegular = try refusal(fifo)
        #expect(notRegular.code == .invalidFile)
        #expect(notRegular.message == "change \(fifo.url.path): the fence file cannot be read (not a regular file (a FIFO); only regular files are read), so it cannot be changed; nothing was written")

        let large = try Fixture(maximumBytes: Self.fences.utf8.count + 10)
        try large.edit(Self.fences + String(repeating: " ", count: 20))
        let tooLarge = try refusal(large)
        #expect(tooLarge.code == .invalidFile)
        #expect(tooLarge.message.contains("the fence file cannot be read (the file is"), "\(tooLarge)")

        let directory = try Fixture(directoryOf: Self.fences)
        let alice = directory.deviceFile("alice/phone")
        try FileManager.default.removeItem(at: alice)
        #expect(mkfifo(alice.path, 0o600) == 0)
        let part = try refusal(directory)
        #expect(part.code == .invalidFile)
        #expect(part.message.contains("the fence file cannot be read (\(alice.path): not a regular file (a FIFO)"), "\(part)")

        // The device's own file edited by hand, so the whole directory is read again, and
        // another device's file cannot be read.
        let reread = try Fixture(directoryOf: Self.fences)
        let edited = try String(contentsOf: reread.deviceFile("alice/phone"), encoding: .utf8).replacingOccurrences(of: "Welcome home", with: "Edited by hand")
        try edited.write(to: reread.deviceFile("alice/phone"), atomically: true, encoding: .utf8)
        let van = reread.deviceFile("van/7")
        try FileManager.default.removeItem(at: van)
        #expect(mkfifo(van.path, 0o600) == 0)
        let whole = try refusal(reread)
        #expect(whole.code == .invalidFile)
        #expect(whole.message.contains("the fence file cannot be read (\(van.path): not a regular file (a FIFO)"), "\(whole)")

        let replaced = try Fixture(directoryOf: Self.fences)
        try FileManager.default.removeItem(at: replaced.url)
        try "{}".write(to: replaced.url, atomically: true, encoding: .utf8)
        let file = try refusal(replaced)
        #expect(file.code == .invalidFile)
        #expect(file.message.contains("the fence file cannot be read (not a directory)"), "\(file)")
    }

    /// A fence directory removed while the bridge runs: a change is refused and nothing
    /// is made in its place, so the next look does not find a directory of one device.
    /// The change is for a device with no file yet, whose parts (its file, the shared
    /// file) are missing in force too.
    @Test("a change to a fence directory that was removed is refused and makes nothing")
    func aChangeToARemovedDirectoryIsRefused() throws {
        let fixture = try Fixture(directoryOf: Self.fences)
        try FileManager.default.removeItem(at: fixture.url)
        let (results, change) = fixture.book.write([Self.add("gym", to: "carol/phone")], limits: FenceLimits())
        #expect(change == nil)
        guard case .failure(let error) = results.first else {
            Issue.record("not refused: \(results)")
            return
        }
        #expect(error.code == .invalidFile)
        #expect(!FileManager.default.fileExists(atPath: fixture.url.path))
        #expect(fixture.book.problem != nil)
    }
}
