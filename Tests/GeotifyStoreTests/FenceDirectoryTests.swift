import Foundation
import GeotifyCore
import GeotifyJSON
@testable import GeotifyStore
import GeotifyTestSupport
import Synchronization
import Testing

/// The fence directory: a file per device and one for the shared fences, read and
/// written as one book, each instance of several reading and writing only its own
/// devices' files.
@Suite("Fence directory")
struct FenceDirectoryTests {
    let directory = TemporaryDirectory()

    func fence(_ identifier: String, _ latitude: Double) -> String {
        #"{"identifier": "\#(identifier)", "latitude": \#(latitude), "longitude": 8, "radius": 100, "eventType": "onEntry"}"#
    }

    /// A directory with `devices` (each with a home fence) and a shared plaza.
    func makeDirectory(_ devices: [String]) -> String {
        let root = directory.file("fences")
        try? FileManager.default.createDirectory(atPath: root + "/devices", withIntermediateDirectories: true)
        _ = directory.write(#"{"shared": [\#(fence("plaza", 40))]}"#, to: "fences/shared.json")
        for (index, device) in devices.enumerated() {
            _ = directory.write(#"{"devices": {"\#(device)": [\#(fence("home", 50 + Double(index)))]}}"#, to: "fences/devices/\(device.replacingOccurrences(of: "/", with: "%2F")).json")
        }
        return root
    }

    @Test func aDirectoryLoadsAsOneBook() throws {
        let root = makeDirectory(["alice/phone", "bob/phone"])
        let file = FenceFile(path: root)
        #expect(file.layout == .directory)
        let book = try #require(file.load().book)
        #expect(Set(book.devices.keys) == ["alice/phone", "bob/phone"])
        #expect(book.deviceFences(of: "alice/phone").fence("plaza") != nil)
        #expect(book.fenceCount == 3)
    }

    @Test func aShardReadsOnlyItsOwnDevicesFiles() throws {
        let devices = (0..<30).map { "u\($0)/p" }
        let root = makeDirectory(devices)
        for index in 0..<3 {
            let shard = try ShardAssignment(index: index, count: 3)
            let book = try #require(FenceFile(path: root, shard: shard).load().book)
            #expect(Set(book.devices.keys) == Set(devices.filter(shard.owns)))
            #expect(book.shared.count == 1)
        }
    }

    @Test func aChangeWritesOnlyTheDevicesFile() throws {
        let root = makeDirectory(["alice/phone", "bob/phone"])
        let file = FenceFile(path: root)
        let bob = root + "/devices/bob%2Fphone.json"
        let before = try Data(contentsOf: URL(fileURLWithPath: bob))
        let change = FenceChange.add(device: "alice/phone", fence: try #require(try? JSONParser().parse(Array(fence("work", 60).utf8))))
        _ = try file.apply(change, expecting: nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: bob)) == before, "another device's file is left alone")
        let book = try #require(file.load().book)
        #expect(book.fences(of: "alice/phone").map(\.identifier) == ["home", "work"])
        let added = FenceChange.add(device: "carol/phone", fence: try #require(try? JSONParser().parse(Array(fence("home", 70).utf8))))
        _ = try file.apply(added, expecting: nil)
        #expect(FileManager.default.fileExists(atPath: root + "/devices/carol%2Fphone.json"), "a new device gets a file of its own")
    }

    /// A device's change reads the shared file (its fences' identifiers are checked
    /// against the shared ones) and the device's file holding the lock the directory's
    /// writers take, until it has written: no other writer's change to the shared file
    /// can come between, to be missed by the check.
    @Test func aChangeHoldsTheDirectoryLockFromItsReadOfTheSharedFileToItsWrite() throws {
        let root = makeDirectory(["alice/phone"])
        let file = FenceFile(path: root)
        let book = try #require(file.load().book)
        var text = FenceFileText()
        var lockedWhileDeciding: Bool?
        let (written, failed) = try file.change(devices: ["alice/phone"], text: &text) { parts in
            #expect(parts?[FenceDirectory.sharedName] != nil, "the shared file was read")
            let descriptor = open(root + "/devices", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            defer { close(descriptor) }
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                flock(descriptor, LOCK_UN)
                lockedWhileDeciding = false
            } else {
                lockedWhileDeciding = errno == EWOULDBLOCK
            }
            return (book.replacing(devices: ["alice/phone": []]), ["alice/phone"])
        }
        #expect(lockedWhileDeciding == true, "another writer of the directory waits until the change has written")
        #expect(failed.isEmpty)
        #expect(written.keys.sorted() == ["devices/alice%2Fphone.json"])
        #expect(try #require(file.load().book).fences(of: "alice/phone").isEmpty)
    }

    /// A shared change (the command line's `--shared`) reads the devices' files (a
    /// shared identifier must not be a device's own) and writes the shared file holding
    /// the lock the directory's writers take: a device's change made by another writer
    /// while it waits for the lock is read, and its clashing fence refused, not written
    /// next to it into a directory that would no longer load.
    @Test func aSharedChangeHoldsTheDirectoryLockFromItsReadOfTheDevicesFilesToItsWrite() throws {
        let root = makeDirectory(["alice/phone"])
        let file = FenceFile(path: root)
        let work = try #require(try? JSONParser().parse(Array(fence("work", 60).utf8)))
        let outcome = try change(in: root, whileWaitingForTheLock: { () throws(FenceChangeError) in
            try file.apply(SharedFenceChange(owner: SharedFences.everyDevice, .add(device: SharedFences.everyDevice, fence: work))).applied
        }, meanwhile: {
            // The other writer adds "work" to alice's own fences.
            _ = directory.write(#"{"devices": {"alice/phone": [\#(fence("home", 50)), \#(fence("work", 61))]}}"#, to: "fences/devices/alice%2Fphone.json")
        })
        #expect(throws: FenceChangeError.self) { try outcome.get() }
        if case .failure(let error) = outcome { #expect(error.code == .duplicateIdentifier, "\(error)") }
        let loaded = file.load()
        #expect(loaded.errors.isEmpty, "\(loaded.errors)")
        #expect(loaded.book?.shared[SharedFences.everyDevice]?.fences.map(\.identifier) == ["plaza"])
    }

    /// A device's change by the command line (`geotify fences import DEVICE FILE`, as
    /// `add` and `edit`: `apply(_:expecting:creatingMissingFile:)`) reads the shared file
    /// and the device's file holding the lock the directory's writers take, until it has
    /// written: a shared fence that another writer adds while it waits for the lock is
    /// read, and the device's fence of the same identifier refused, not written into its
    /// file next to it, where the directory would no longer load.
    @Test func aDeviceChangeByTheCommandLineHoldsTheDirectoryLockFromItsReadToItsWrite() throws {
        let root = makeDirectory(["alice/phone"])
        let file = FenceFile(path: root)
        let work = try #require(try? JSONParser().parse(Array(fence("work", 60).utf8)))
        let outcome = try change(in: root, whileWaitingForTheLock: { () throws(FenceChangeError) in
            try file.apply(.append(device: "alice/phone", fences: [work]), expecting: nil, creatingMissingFile: true).applied
        }, meanwhile: {
            // The other writer adds "work" to the shared fences.
            _ = directory.write(#"{"shared": [\#(fence("plaza", 40)), \#(fence("work", 61))]}"#, to: "fences/shared.json")
        })
        #expect(throws: FenceChangeError.self) { try outcome.get() }
        if case .failure(let error) = outcome { #expect(error.code == .duplicateIdentifier, "\(error)") }
        let loaded = file.load()
        #expect(loaded.errors.isEmpty, "\(loaded.errors)")
        #expect(loaded.book?.fences(of: "alice/phone").map(\.identifier) == ["home"])
    }

    /// Runs `change` on another thread while another writer (a bridge's command, an
    /// import) holds the lock the directory's writers take; once the change waits for it
    /// (at its read when it holds the lock from there, at its write otherwise), the other
    /// writer does `meanwhile` and lets go. The change's outcome.
    func change(
        in root: String, whileWaitingForTheLock change: @escaping @Sendable () throws(FenceChangeError) -> FenceChange.Applied,
        meanwhile: () -> Void
    ) throws -> Result<FenceChange.Applied, FenceChangeError> {
        let holder = try DirectoryLockHolder(fenceDirectory: root)
        let result = Mutex<Result<FenceChange.Applied, FenceChangeError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            result.withLock { $0 = Result(catching: change) }
            done.signal()
        }
        let waited = waitUntil { holder.hasWaiter }
        meanwhile()
        holder.release()
        #expect(waited, "the change waits for the directory's lock")
        try #require(done.wait(timeout: .now() + 10) == .success)
        return try #require(result.withLock { $0 })
    }

    /// A device the book no longer has is marked for removal (nil), not left out, which
    /// would leave its file and its fences in place.
    @Test func aDeviceTheBookNoLongerHasHasItsFileRemoved() throws {
        let root = makeDirectory(["alice/phone", "bob/phone"])
        let file = FenceFile(path: root)
        let book = try #require(file.load().book)
        var devices = book.devices
        devices["bob/phone"] = nil
        let files = FenceFile.deviceFiles(of: ["alice/phone", "bob/phone"], in: FenceBook(devices: devices))
        #expect(files.keys.sorted() == ["alice%2Fphone.json", "bob%2Fphone.json"].map { "devices/" + $0 })
        #expect(files["devices/bob%2Fphone.json"] == .some(nil))
        #expect(files["devices/alice%2Fphone.json"].flatMap { $0 } != nil)
    }

    @Test func aFileEditedSinceItWasReadIsNotOverwritten() throws {
        let root = makeDirectory(["alice/phone"])
        let file = FenceFile(path: root)
        let loaded = file.load()
        let book = try #require(loaded.book)
        _ = directory.write(#"{"devices": {"alice/phone": [\#(fence("edited", 1))]}}"#, to: "fences/devices/alice%2Fphone.json")
        let error = #expect(throws: StoreError.self) {
            _ = try file.write(book.replacing(devices: ["alice/phone": []]), expecting: loaded.contents, devices: ["alice/phone"])
        }
        #expect(error?.code == .stale, "a refusal, not a failure to write")
        #expect(try #require(file.load().book).fences(of: "alice/phone").map(\.identifier) == ["edited"])
    }

    @Test func problemsNameTheFileTheyAreIn() {
        let root = makeDirectory(["alice/phone"])
        _ = directory.write(#"{"devices": {"bob/phone": []}}"#, to: "fences/devices/alice%2Fphone.json")
        _ = directory.write(#"{"devices": {}}"#, to: "fences/shared.json")
        _ = directory.write("notes", to: "fences/devices/README")
        let loaded = FenceFile(path: root).load()
        #expect(loaded.book == nil)
        let text = loaded.errors.map(\.description).joined(separator: "\n")
        #expect(text.contains("devices/alice%2Fphone.json: a device file must hold exactly the device \"alice/phone\" its name stands for"), "\(text)")
        #expect(text.contains("shared.json:1: unknown top-level key \"devices\" (expected \"groups\" or \"shared\")"), "\(text)")
        #expect(text.contains("devices/README: not a device file"), "\(text)")
    }

    @Test func aHashedNameHoldingADeviceWithAPlainNameIsRefused() throws {
        let root = makeDirectory(["alice/phone"])
        // Another file for the same device, under a hashed name that is not its name.
        let path = directory.write(#"{"devices": {"alice/phone": [\#(fence("gym", 51))]}}"#, to: "fences/devices/~0123456789abcdef-alice.json")
        let loaded = FenceFile(path: root).load()
        #expect(loaded.book == nil)
        #expect(loaded.errors.map(\.description) == [
            #"\#(path): device "alice/phone": not the device's file name: the fences of "alice/phone" are written to \#(root)/devices/alice%2Fphone.json; rename the file to that"#,
        ])
    }

    /// A hashed name (`~...`) stands for the one device whose identifier hashes to it: a
    /// file under it that holds another device would take that device's name, and could
    /// be a second file for its own.
    @Test func aHashedNameHoldsOnlyTheDeviceItIsTheHashOf() throws {
        let root = directory.file("long")
        let file = FenceFile(path: root + "/")
        let long = String(repeating: "é", count: 90) + "/x"
        let other = String(repeating: "é", count: 90) + "/y"
        _ = try file.write(FenceBook().replacing(devices: [long: []]), expecting: file.contents(of: FenceBook()))
        let names = try FileManager.default.contentsOfDirectory(atPath: root + "/devices")
        let name = try #require(names.first, "the device's file")
        #expect(names.count == 1 && name.hasPrefix("~"), "\(names)")
        #expect(try #require(file.load().book).devices.keys.sorted() == [long], "a file under its own hash loads")

        // The same name holding another long device: its file would be another name.
        _ = directory.write(#"{"devices": {"\#(other)": []}}"#, to: "long/devices/\(name)")
        var loaded = file.load()
        #expect(loaded.book == nil)
        #expect(loaded.errors.map(\.reason).first?.hasPrefix("not the device's file name: the fences of \"\(other)\" are written to \(root)/devices/~") == true, "\(loaded.errors)")
        #expect(loaded.errors.map(\.reason).first?.hasSuffix("/devices/\(name); rename the file to that") == false)

        // A second hashed file for the device, under a hash that is not its own.
        _ = directory.write(#"{"devices": {"\#(long)": []}}"#, to: "long/devices/\(name)")
        let stray = directory.write(#"{"devices": {"\#(long)": []}}"#, to: "long/devices/~0123456789abcdef-x.json")
        loaded = file.load()
        #expect(loaded.book == nil)
        #expect(loaded.errors.map(\.description) == [
            #"\#(stray): device "\#(long)": not the device's file name: the fences of "\#(long)" are written to \#(root)/devices/\#(name); rename the file to that"#,
        ])
    }

    /// A device file whose name decodes to its device but is not the name writes use
    /// (an escape in lower case, a character left unescaped, a bad escape) is refused,
    /// naming the file and the name to give it: a command would write a second file.
    @Test func aDeviceFileNotUnderItsDevicesNameIsRefusedNamingTheRightOne() throws {
        for name in ["alice%2fphone.json", "alice%2Fph%6Fne.json", "al%zzice.json"] {
            let root = makeDirectory([])
            let path = directory.write(#"{"devices": {"alice/phone": [\#(fence("gym", 51))]}}"#, to: "fences/devices/\(name)")
            let loaded = FenceFile(path: root).load()
            #expect(loaded.book == nil, "\(name)")
            #expect(loaded.errors.map(\.description) == [
                #"\#(path): device "alice/phone": not the device's file name: the fences of "alice/phone" are written to \#(root)/devices/alice%2Fphone.json; rename the file to that"#,
            ])
            try FileManager.default.removeItem(atPath: path)
        }
        let root = makeDirectory([])
        _ = directory.write(#"{"devices": {"a b": [\#(fence("gym", 51))]}}"#, to: "fences/devices/a b.json")
        #expect(FenceFile(path: root).load().errors.map(\.reason).first?.contains("are written to \(root)/devices/a%20b.json") == true)
    }

    @Test func aHashedDeviceFileMustHoldExactlyOneDevice() {
        let root = makeDirectory([])
        // A hashed name (`~...`) does not say its device, so the file must hold one.
        let hashed = "fences/devices/~0123456789abcdef-long.json"
        _ = directory.write(#"{"devices": {"alice/phone": [\#(fence("home", 50))], "bob/phone": [\#(fence("home", 51))]}}"#, to: hashed)
        let loaded = FenceFile(path: root).load()
        #expect(loaded.book == nil)
        #expect(loaded.errors.map(\.description) == [#"\#(directory.file(hashed)): a device file must hold exactly one device in "devices""#])
    }

    @Test func namesOfUnusualIdentifiersStayUsable() throws {
        let root = directory.file("odd") + "/"
        let file = FenceFile(path: root)
        #expect(file.layout == .directory)
        let long = String(repeating: "é", count: 90) + "/x"
        let book = FenceBook().replacing(devices: [".hidden/ü": [], long: []])
        let written = try file.write(book, expecting: file.contents(of: FenceBook()))
        #expect(try file.read() == written)
        #expect(Set(try #require(file.load().book).devices.keys) == [".hidden/ü", long])
    }
}
