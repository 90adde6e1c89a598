import Foundation
import GeotifyCore

/// The fences as parts, so a change of a few devices' fences reads and writes only what
/// it depends on: for a single file that is the whole file; for a fence directory, those
/// devices' files and the shared file (whose fences a device's own must not clash with).
/// A running bridge keeps the fingerprint of each part it has in force
/// (`fingerprints(of:)`) and compares only the parts a change reads, so with 10 000
/// device files a change reads two files, not 10 000.
extension FenceFile {
    /// The name of a single file's one part.
    package static let wholeFile = ""

    /// The fingerprint of each part of `contents` (as `read` gives them), by name: the
    /// whole file's (`wholeFile`), or each file's of a directory's snapshot, named
    /// relative to the directory.
    package func fingerprints(of contents: [UInt8]) -> [String: FenceFileFingerprint] {
        guard layout == .directory, let parts = FenceDirectory.partRanges(of: contents) else {
            return [Self.wholeFile: FenceFileFingerprint(of: contents)]
        }
        return Dictionary(parts.map { ($0.name, FenceFileFingerprint(of: contents[$0.range])) }, uniquingKeysWith: { first, _ in first })
    }

    /// Changes the fences of `devices`: reads the parts that depends on, by name (nil for
    /// a part that does not exist), lets `decide` make the book to write from them and
    /// say which devices' fences it changed (nil to write nothing), and writes those
    /// devices' parts; returns the parts written (nil for a file removed) and the devices
    /// whose file failed to be written, with why. `decide` is given nil instead of parts
    /// when the file or directory is missing, so nobody's fences are replaced by the
    /// devices' alone.
    ///
    /// The lock is held from the read to the write, so no other writer's change comes
    /// between: a single file's, read and written whole (once); a fence directory's
    /// (`FenceDirectory.withLock`), over the shared file and the devices' files it reads,
    /// so the devices' fences are checked against the shared file as it is when they are
    /// written. In a fence directory only the devices' files are written, each refused
    /// (as `write` refuses) if it changed since it was read (an edit by hand, which takes
    /// no lock); a file that fails to be written (a full disk) fails its device only, the
    /// others' files are written (`FenceDirectory.writeEach`).
    ///
    /// A file that cannot be read is refused (`StoreError` with the code `invalidFile`,
    /// `unreadable(_:)`), as `FenceFile.apply` refuses it. A write that would take the
    /// file past `maximumBytes` is refused (the code `fenceLimit`), writing nothing: in a
    /// fence directory, counting the files not read as `otherBytes` gives them (called
    /// after `decide`, so it may give the sizes of what `decide` read).
    package func change(
        devices: [String], text: inout FenceFileText, otherBytes: () -> Int = { 0 },
        decide: ([String: [UInt8]?]?) throws(StoreError) -> (book: FenceBook, changed: [String])?
    ) throws(StoreError) -> (written: [String: [UInt8]?], failed: [String: StoreError]) {
        guard layout == .directory else {
            return try AtomicFile.withLock(on: path) { () throws(StoreError) -> (written: [String: [UInt8]?], failed: [String: StoreError]) in
                let current: [UInt8]?
                do throws(StoreError) {
                    current = try AtomicFile.read(path, maximumBytes: maximumBytes, limitName: FenceDirectory.limitName)
                } catch {
                    throw unreadable(error)
                }
                guard let decided = try decide(current.map { [Self.wholeFile: $0] }) else { return ([:], [:]) }
                let bytes = text.contents(of: decided.book)
                try checkSize(of: bytes)
                try AtomicFile.write(bytes, to: path)
                return ([Self.wholeFile: bytes], [:])
            }
        }
        let directory = directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            _ = try decide(nil)
            return ([:], [:])
        }
        guard isDirectory.boolValue else { throw unreadable(StoreError("read \(path)", "not a directory")) }
        return try directory.withLock { () throws(StoreError) -> (written: [String: [UInt8]?], failed: [String: StoreError]) in
            var read: [String: [UInt8]?] = [:]
            for name in [FenceDirectory.sharedName] + devices.map(FenceDirectory.fileName) {
                do throws(StoreError) {
                    read[name] = try directory.readFile(name)
                } catch {
                    throw unreadable(error)
                }
            }
            guard let (book, changed) = try decide(read) else { return ([:], [:]) }
            var changes = FenceFile.deviceFiles(of: changed, in: book)
            let expected = FenceDirectory.snapshot(read.compactMap { name, bytes in bytes.map { FenceDirectory.Part(name: name, bytes: $0) } })
            let failedFiles = try directory.writeEachHoldingLock(changes, expecting: expected, otherBytes: otherBytes())
            var failed: [String: StoreError] = [:]
            for device in changed {
                let name = FenceDirectory.fileName(of: device)
                guard let error = failedFiles[name] else { continue }
                failed[device] = error
                changes[name] = nil
            }
            return (changes, failed)
        }
    }
}
