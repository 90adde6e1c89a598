import Dispatch
import Foundation
import GeotifyCore
import GeotifyJSON
import GeotifyStore
import GeotifyTestSupport
import Synchronization
import Testing

/// The fence file as a file: a missing or unreadable one is never replaced by a file
/// holding only the new fence, a link stays a link, leftovers of killed writes are
/// cleared, edits show by content, and changes for different devices do not make each
/// other stale.
@Suite("Fence file integrity")
struct FenceFileIntegrityTests {
    let directory = TemporaryDirectory()

    static let text = """
        {"devices": {"alice/phone": [
          {"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "Welcome home", "eventType": "onEntry"}
        ], "bob/phone": []},
         "groups": {"family": ["alice/phone", "bob/phone"]},
         "shared": [{"identifier": "school", "latitude": 52.5, "longitude": 13.4, "radius": 80, "eventType": "onEntry", "group": "family"}]}
        """

    static func fence(_ identifier: String) -> JSON {
        ["identifier": .string(identifier), "latitude": 52.5, "longitude": 13.4, "radius": 50, "eventType": "onEntry"]
    }

    func text(_ path: String) -> String? {
        FileManager.default.contents(atPath: path).map { String(decoding: $0, as: UTF8.self) }
    }

    func entries() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    // MARK: missing and unreadable

    @Test func aWriteToAMissingFileIsRefusedAndCreatesNothing() throws {
        let file = FenceFile(path: directory.file("fences.json"))
        let add = FenceChange.add(device: "alice/phone", fence: Self.fence("gym"))
        let refusals = [
            #expect(throws: FenceChangeError.self) { try file.apply(add, expecting: nil) },
            #expect(throws: FenceChangeError.self) { try file.preview(add) },
            #expect(throws: FenceChangeError.self) { try file.draft(add) },
            #expect(throws: FenceChangeError.self) { try file.apply(add, basedOn: FenceChangeBasis(device: "alice/phone", fences: nil)) },
        ]
        for refusal in refusals {
            #expect(refusal?.code == .invalidFile)
            #expect(refusal?.message == "the fence file \(file.path) does not exist (deleted or moved?), so it cannot be changed; nothing was written: put it back")
        }
        #expect(try entries() == [])
        #expect(file.inspect() == .missing)
    }

    @Test func onlyAnExplicitRequestCreatesAMissingFile() throws {
        let file = FenceFile(path: directory.file("fences.json"))
        _ = try file.apply(.add(device: "alice/phone", fence: Self.fence("gym")), expecting: nil, creatingMissingFile: true)
        #expect(file.load().book?.fences(of: "alice/phone").map(\.identifier) == ["gym"])
    }

    @Test func anUnreadableFileIsRefusedAndLeftAlone() throws {
        // A directory where the file should be cannot be read, even by root.
        let path = directory.file("fences.json")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let file = FenceFile(path: path)
        let error = #expect(throws: FenceChangeError.self) {
            try file.apply(.add(device: "alice/phone", fence: Self.fence("gym")), expecting: nil)
        }
        #expect(error?.code == .invalidFile)
        #expect(error?.message.hasPrefix("the fence file \(path) cannot be read (") == true)
        if case .unreadable = file.inspect() {} else { Issue.record("inspect() did not report the file as unreadable: \(file.inspect())") }
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    // MARK: links and leftovers

    @Test func aWriteGoesThroughALinkWhichStaysALink() throws {
        let real = TemporaryDirectory()
        let target = real.write(Self.text, to: "fences.json")
        let link = directory.file("fences.json")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let file = FenceFile(path: link)
        let (_, written) = try file.apply(.add(device: "alice/phone", fence: Self.fence("gym")), expecting: nil)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(text(target) == String(decoding: written, as: UTF8.self))
        #expect(file.load().book?.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
        #expect(try entries() == ["fences.json"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: real.path) == ["fences.json"])

        // A relative link, through a second link.
        let relative = directory.file("relative.json")
        try FileManager.default.createSymbolicLink(atPath: relative, withDestinationPath: "fences.json")
        _ = try FenceFile(path: relative).apply(.delete(device: "alice/phone", identifier: "gym"), expecting: nil)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: relative) == "fences.json")
        #expect(FenceFile(path: target).load().book?.fences(of: "alice/phone").map(\.identifier) == ["home"])
    }

    @Test func leftoversOfKilledWritesAreRemovedAndNothingElse() throws {
        let path = directory.write(Self.text, to: "fences.json")
        for name in [".fences.json.tmp-4242-17", ".fences.json.tmp-1-2", ".other.json.tmp-1-2", "fences.json.bak"] {
            _ = directory.write("partial", to: name)
        }
        let removed = try AtomicFile.removeLeftovers(of: path)
        #expect(removed == [directory.file(".fences.json.tmp-1-2"), directory.file(".fences.json.tmp-4242-17")])
        #expect(try entries() == [".other.json.tmp-1-2", "fences.json", "fences.json.bak"])
        #expect(text(path) == Self.text)
        #expect(try AtomicFile.removeLeftovers(of: path) == [])
    }

    // MARK: content

    @Test func anEditKeepingSizeAndModificationTimeChangesTheFingerprint() throws {
        let path = directory.write(Self.text, to: "fences.json")
        let file = FenceFile(path: path)
        guard case .contents(let before, let fingerprint) = file.inspect() else {
            Issue.record("the file was not read")
            return
        }
        var info = stat()
        #expect(stat(path, &info) == 0)
        let edited = Self.text.replacingOccurrences(of: "radius\": 100", with: "radius\": 900")
        #expect(edited.utf8.count == before.count && edited != Self.text)
        _ = directory.write(edited, to: "fences.json")
        var times = [info.st_atim, info.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        var after = stat()
        #expect(stat(path, &after) == 0)
        #expect(after.st_size == info.st_size && after.st_mtim.tv_sec == info.st_mtim.tv_sec && after.st_mtim.tv_nsec == info.st_mtim.tv_nsec)
        guard case .contents(_, let changed) = file.inspect() else {
            Issue.record("the file was not read")
            return
        }
        #expect(changed != fingerprint)
        #expect(changed.size == fingerprint.size)
        #expect(FenceFileFingerprint(of: Array(Self.text.utf8)) == fingerprint)
    }

    // MARK: stale per device

    @Test func aCommitForOneDeviceSurvivesChangesForAnother() throws {
        let file = FenceFile(path: directory.write(Self.text, to: "fences.json"))
        let change = FenceChange.add(device: "alice/phone", fence: Self.fence("gym"))
        let (preview, basis) = try file.draft(change)
        #expect(preview.book.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
        _ = try file.apply(.add(device: "bob/phone", fence: Self.fence("pool")), expecting: nil)
        let (applied, _) = try file.apply(change, basedOn: basis)
        #expect(applied.fence?.identifier == "gym")
        let book = try #require(file.load().book)
        #expect(book.fences(of: "alice/phone").map(\.identifier) == ["home", "gym"])
        #expect(book.fences(of: "bob/phone").map(\.identifier) == ["pool"])
    }

    @Test func aCommitWhoseDeviceChangedIsStaleAndWritesNothing() throws {
        let file = FenceFile(path: directory.write(Self.text, to: "fences.json"))
        let change = FenceChange.delete(device: "alice/phone", identifier: "home")
        let (_, basis) = try file.draft(change)
        _ = try file.apply(.edit(device: "alice/phone", identifier: "home", fields: JSONObject([.init(key: "radius", value: 120)])), expecting: nil)
        let before = text(file.path)
        let error = #expect(throws: FenceChangeError.self) { try file.apply(change, basedOn: basis) }
        #expect(error?.code == .stale)
        #expect(error?.message == "the fences of device \"alice/phone\" in \(file.path) changed since the preview (edited by someone else); nothing was written, preview again")
        #expect(text(file.path) == before)
    }

    @Test func theFencesInForceMakeTheSameBasisAsTheFile() throws {
        let file = FenceFile(path: directory.write(Self.text, to: "fences.json"))
        let book = try #require(file.load().book).revised(knownRevisions: [:], currentRevision: 7)
        let change = FenceChange.delete(device: "alice/phone", identifier: "home")
        #expect(FenceChangeBasis(of: change, in: book) == (try file.draft(change).basis))
        #expect(FenceChangeBasis(device: "carol/phone", fences: nil) != FenceChangeBasis(device: "carol/phone", fences: []))
    }

    /// The command line's change (and an MQTT commit's) is refused as `fence_limit` when
    /// the file would be larger than `maximumBytes`, which would make it fail to load.
    @Test func aChangePastMaximumBytesIsRefusedNotWritten() throws {
        let path = directory.write(Self.text, to: "fences.json")
        let file = FenceFile(path: path, maximumBytes: Self.text.utf8.count + 100)
        let error = #expect(throws: FenceChangeError.self) {
            try file.apply(.add(device: "alice/phone", fence: Self.fence("gym")), expecting: nil)
        }
        #expect(error?.code == .fenceLimit)
        #expect(error?.message.contains("at most \(Self.text.utf8.count + 100) are accepted (maximumFenceFileBytes), so nothing was written") == true, "\(String(describing: error))")
        #expect(text(path) == Self.text)
        #expect(try file.apply(.delete(device: "alice/phone", identifier: "home"), expecting: nil).written.count <= Self.text.utf8.count + 100)
    }

    @Test func aFenceClashingWithASharedOneIsRefusedNotWritten() throws {
        let file = FenceFile(path: directory.write(Self.text, to: "fences.json"))
        let error = #expect(throws: FenceChangeError.self) {
            try file.apply(.add(device: "bob/phone", fence: Self.fence("school")), expecting: nil)
        }
        #expect(error?.code == .duplicateIdentifier)
        #expect(error?.message == #"device "bob/phone" already has a fence "school", shared with the group "family"; identifiers must be unique per device"#)
        #expect(text(file.path) == Self.text)
    }

    @Test func concurrentCommandsForDifferentDevicesAllSucceed() throws {
        let file = FenceFile(path: directory.write(#"{"devices": {}}"#, to: "fences.json"))
        let devices = (0..<6).map { "client\($0)/phone" }
        let refusals = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: devices.count) { index in
            let device = devices[index]
            for number in 0..<8 {
                let change = FenceChange.add(device: device, fence: Self.fence("f\(number)"))
                do {
                    if number % 2 == 0 {
                        _ = try file.apply(change, expecting: nil)
                    } else {
                        let (_, basis) = try file.draft(change)
                        _ = try file.apply(change, basedOn: basis)
                    }
                } catch {
                    refusals.withLock { $0.append("\(device): \(error)") }
                }
            }
        }
        #expect(refusals.withLock { $0 } == [])
        let book = try #require(file.load().book)
        for device in devices {
            #expect(book.fences(of: device).count == 8, "\(device)")
        }
    }

    /// A write keeps the file's permissions: a fence file (or keys file) only its owner
    /// may read stays so, not made readable by everyone as a new file would be.
    @Test func aWriteKeepsTheFilesPermissions() throws {
        for mode: mode_t in [0o600, 0o640] {
            let path = directory.write(Self.text, to: "fences-\(String(mode, radix: 8)).json")
            #expect(chmod(path, mode) == 0)
            try AtomicFile.write(Array("{}".utf8), to: path)
            var info = stat()
            #expect(stat(path, &info) == 0)
            #expect(info.st_mode & 0o7777 == mode, "mode \(String(info.st_mode & 0o7777, radix: 8)), was \(String(mode, radix: 8))")
            #expect(text(path) == "{}")
        }
    }

    /// A write that cannot be completed (here the rename over a directory in its place)
    /// is refused and removes its temporary file: nothing is left beside the target.
    @Test func aFailedWriteLeavesNoTemporaryFile() throws {
        let path = directory.file("fences.json")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        _ = directory.write("inside", to: "fences.json/keep")
        #expect(throws: StoreError.self) { try AtomicFile.write(Array("{}".utf8), to: path) }
        #expect(try entries() == ["fences.json"])
    }

    /// A file that holds more than its size says (as those of /proc, whose size is 0, and
    /// as a file that grows while it is read) is read on to its end, and refused once it
    /// passes the limit: never read on without end, never read past the limit (the
    /// thread reads 101 bytes of the file, not the whole of it).
    @Test func aFileLargerThanItsSizeSaysIsReadToItsEndOrRefusedAtTheLimit() throws {
        let path = "/proc/self/status"
        let whole = try #require(try AtomicFile.read(path, maximumBytes: 1 << 20, limitName: "the test's limit"))
        #expect(String(decoding: whole.prefix(5), as: UTF8.self) == "Name:")
        try #require(whole.count > 1_000)
        let result = Mutex<(Result<[UInt8]?, StoreError>, read: Int)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let before = try? ThreadReads.now()
            let read = Result { () throws(StoreError) -> [UInt8]? in try AtomicFile.read(path, maximumBytes: 100, limitName: "the test's limit") }
            let bytes = before.flatMap { before in (try? ThreadReads.now())?.bytesRead(since: before) } ?? -1
            result.withLock { $0 = (read, bytes) }
            done.signal()
        }
        try #require(done.wait(timeout: .now() + 10) == .success, "the read did not end")
        let outcome = try #require(result.withLock { $0 })
        let error = #expect(throws: StoreError.self) { try outcome.0.get() }
        #expect(error?.reason == "the file is more than 100 bytes; at most 100 are accepted (the test's limit)")
        #expect(outcome.read == 101, "the bytes read: the limit and one more")
    }
}
