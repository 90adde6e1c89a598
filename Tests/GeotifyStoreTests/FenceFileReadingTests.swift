import Foundation
import GeotifyCore
import GeotifyStore
import Synchronization
import Testing

/// Reading a fence file or directory within `maximumBytes`: what is not a regular file is
/// refused without waiting for it, and a larger file without being read whole, so a file
/// put there by mistake or by someone hostile neither blocks the reader nor fills memory.
@Suite("Fence file reading")
struct FenceFileReadingTests {
    let directory = TemporaryDirectory()

    static let fences = #"{"devices": {"alice/phone": [{"identifier": "home", "latitude": 52.5, "longitude": 13.4, "radius": 100, "eventType": "onEntry"}]}}"#

    /// What `file.load()` gives, or nil when it did not come back within 5 s; then the
    /// FIFO `fifo` is opened for writing and closed, so the blocked read ends and the test
    /// fails instead of hanging.
    func load(_ file: FenceFile, unblocking fifo: String) -> FenceFile.Loaded? {
        let result = Mutex<FenceFile.Loaded?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let loaded = file.load()
            result.withLock { $0 = loaded }
            done.signal()
        }
        guard done.wait(timeout: .now() + 5) == .success else {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            done.wait()
            return nil
        }
        return result.withLock { $0 }
    }

    @Test func aFIFOInPlaceOfTheFenceFileIsRefusedWithoutWaitingForAWriter() throws {
        let path = directory.file("fences.json")
        #expect(mkfifo(path, 0o600) == 0)
        let loaded = try #require(load(FenceFile(path: path), unblocking: path), "the read waited for a writer")
        #expect(loaded.book == nil)
        #expect(loaded.errors.map(\.description) == ["\(path): not a regular file (a FIFO); only regular files are read"])
    }

    @Test func aFIFOInAFenceDirectoryIsRefusedNamingIt() throws {
        let root = directory.file("fences")
        try FileManager.default.createDirectory(atPath: root + "/devices", withIntermediateDirectories: true)
        _ = directory.write(Self.fences, to: "fences/devices/alice%2Fphone.json")
        let fifo = root + "/devices/bob%2Fphone.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let loaded = try #require(load(FenceFile(path: root), unblocking: fifo), "the read waited for a writer")
        #expect(loaded.book == nil)
        #expect(loaded.errors.map(\.description).joined().contains("\(fifo): not a regular file (a FIFO)"), "\(loaded.errors)")
    }

    /// A change refused because a file of the fence directory cannot be read names that
    /// file, not only the directory, as `inspect` does.
    @Test func aFenceDirectorysUnreadableFileIsNamedWhenAChangeIsRefused() throws {
        let root = directory.file("fences")
        try FileManager.default.createDirectory(atPath: root + "/devices", withIntermediateDirectories: true)
        _ = directory.write(Self.fences, to: "fences/devices/alice%2Fphone.json")
        let fifo = root + "/devices/bob%2Fphone.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let file = FenceFile(path: root)
        let error = #expect(throws: FenceChangeError.self) { try file.apply(.delete(device: "alice/phone", identifier: "home"), expecting: nil) }
        #expect(error?.code == .invalidFile)
        #expect(error?.message == "the fence file \(root) cannot be read (\(fifo): not a regular file (a FIFO); only regular files are read), so it cannot be changed; nothing was written")
        #expect(file.inspect() == .unreadable("\(fifo): not a regular file (a FIFO); only regular files are read"))
    }

    @Test func aLinkToADeviceIsRefusedUnread() {
        let path = directory.file("fences.json")
        #expect(symlink("/dev/null", path) == 0)
        let loaded = FenceFile(path: path).load()
        #expect(loaded.book == nil)
        #expect(loaded.errors.map(\.description) == ["\(path): not a regular file (a character device); only regular files are read"])
    }

    /// A file far larger than the limit (sparse, so the test costs no disk) is refused by
    /// its size: its bytes are never read, so none are held.
    @Test func aFileLargerThanTheLimitIsRefusedUnread() throws {
        let path = directory.file("fences.json")
        let descriptor = open(path, O_WRONLY | O_CREAT, 0o600)
        #expect(ftruncate(descriptor, 64 << 20) == 0)
        close(descriptor)
        let loaded = FenceFile(path: path, maximumBytes: 1_000).load()
        #expect(loaded.book == nil)
        #expect(loaded.contents.isEmpty, "the file was read: \(loaded.contents.count) bytes held")
        #expect(loaded.errors.map(\.description).joined().contains("the file is \(64 << 20) bytes; at most 1000 are accepted (maximumFenceFileBytes)"), "\(loaded.errors)")
        #expect(FenceFile(path: directory.write(Self.fences, to: "small.json"), maximumBytes: 1_000).load().book != nil)
    }

    /// In a fence directory the limit is for all the files together: the file that takes
    /// them past it is refused, by name, unread.
    @Test func aFenceDirectoryLargerThanTheLimitIsRefusedAtTheFileThatPassesIt() throws {
        let root = directory.file("fences")
        try FileManager.default.createDirectory(atPath: root + "/devices", withIntermediateDirectories: true)
        _ = directory.write(Self.fences, to: "fences/devices/alice%2Fphone.json")
        let large = root + "/devices/bob%2Fphone.json"
        let descriptor = open(large, O_WRONLY | O_CREAT, 0o600)
        #expect(ftruncate(descriptor, 64 << 20) == 0)
        close(descriptor)
        let loaded = FenceFile(path: root, maximumBytes: 1_000).load()
        #expect(loaded.book == nil)
        #expect(loaded.contents.isEmpty, "the files were read: \(loaded.contents.count) bytes held")
        let text = loaded.errors.map(\.description).joined()
        #expect(text.contains("\(large): the file is \(64 << 20) bytes; at most \(1_000 - Self.fences.utf8.count) are accepted (maximumFenceFileBytes, less the \(Self.fences.utf8.count) bytes of the fence files read before it)"), "\(text)")
    }
}
