import Foundation
import GeotifyCore

/// The fences as a directory, for several instances that share the devices: one file per
/// device, so only a device's owner ever writes its file and no two instances write the
/// same one, and one file for the groups and shared fences, which people (or the CLI)
/// edit and every instance reads.
///
/// ```
/// fences/
///   shared.json                 {"groups": {...}, "shared": [...]}   (optional)
///   devices/alice%2Fphone.json  {"devices": {"alice/phone": [...]}}  (one device each)
/// ```
///
/// A device file holds the same JSON as the single fence file, with exactly one device;
/// its name is the device identifier with every byte outside `A-Z a-z 0-9 _ - .`
/// written as `%XX` (and a leading `.` too), plus `.json`, so an instance can skip the
/// files of other shards' devices without opening them. An identifier whose name would
/// be too long for a file system gets `~` and a hash of it instead; such a file is read
/// (by every instance, as its name does not say its device) and must hold the device
/// whose name it is, as every other device file. Names starting with `.` (temporary files of atomic
/// writes, editors' swap files) are not fence files.
///
/// `FenceFile` treats the directory as one document: its contents are a snapshot of
/// every file (name and bytes, framed, sorted by name), so two snapshots are equal
/// exactly when no file changed, and a write replaces only the files whose device
/// changed.
struct FenceDirectory {
    /// The directory.
    let root: String
    /// Only the files of this instance's devices are read, when set.
    let shard: ShardAssignment?
    /// The most bytes read of all the files together (`FenceFile.maximumBytes`).
    let maximumBytes: Int

    /// The file of the groups and shared fences, relative to the root.
    static let sharedName = "shared.json"
    /// The directory of the device files, relative to the root.
    static let devicesName = "devices"
    /// The setting that limits the size of the fences, as refusals name it.
    static let limitName = "maximumFenceFileBytes"
    /// The longest file name written; longer ones are hashed.
    private static let maximumNameBytes = 240

    /// One file of a snapshot: its path relative to the root, and its bytes.
    struct Part: Equatable {
        var name: String
        var bytes: [UInt8]
    }

    /// Every fence file of the directory (this shard's, when set) as a snapshot; nil when
    /// there is no such directory. Refused, without reading on, at the first file that is
    /// not a regular file or that takes the files together past `maximumBytes`.
    func read() throws(StoreError) -> [UInt8]? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory) else { return nil }
        guard isDirectory.boolValue else { throw StoreError("read \(root)", "not a directory") }
        var parts: [Part] = []
        var total = 0
        if let shared = try readFile(FenceDirectory.sharedName) {
            parts.append(Part(name: FenceDirectory.sharedName, bytes: shared))
            total += shared.count
        }
        let devices = path(of: FenceDirectory.devicesName)
        let names: [String]
        do {
            names = FileManager.default.fileExists(atPath: devices) ? try FileManager.default.contentsOfDirectory(atPath: devices) : []
        } catch {
            throw StoreError("read \(devices)", (error as NSError).localizedDescription)
        }
        // In order of name, so a refusal for the size names the same file every time.
        for name in names.sorted() where !name.hasPrefix(".") {
            if let shard, let device = FenceDirectory.device(named: name), !shard.owns(device) { continue }
            let relative = "\(FenceDirectory.devicesName)/\(name)"
            if let bytes = try readFile(relative, before: total) {
                parts.append(Part(name: relative, bytes: bytes))
                total += bytes.count
            }
        }
        return FenceDirectory.snapshot(parts)
    }

    /// Writes the files in `changes` (name → bytes, or nil to remove the file) where they
    /// differ from `expected` (a snapshot, as `read` gave it), leaving every other file
    /// alone. Refuses, writing nothing, when a file to be replaced or removed no longer
    /// holds what `expected` says, or (`fenceLimit`) when the files of `expected` and
    /// the `otherBytes` of the files it leaves out would be more than `maximumBytes`
    /// together. Returns the snapshot after the write.
    func write(_ changes: [String: [UInt8]?], expecting expected: [UInt8], otherBytes: Int = 0) throws(StoreError) -> [UInt8] {
        try write(changes, expecting: expected, otherBytes: otherBytes, each: false, holdingLock: false).snapshot
    }

    /// Writes the files in `changes` as `write(_:expecting:otherBytes:)` does, refusing
    /// all alike (a file changed since it was read, the size limit), but each file on its
    /// own: a file that fails to be written (a full disk, a link into a directory that
    /// is gone) does not stop the others. Returns the failures by name; the other files
    /// were written.
    func writeEach(_ changes: [String: [UInt8]?], expecting expected: [UInt8], otherBytes: Int = 0) throws(StoreError) -> [String: StoreError] {
        try write(changes, expecting: expected, otherBytes: otherBytes, each: true, holdingLock: false).failed
    }

    /// `write(_:expecting:otherBytes:)`, called within `withLock` (which it would
    /// otherwise take: a second `flock` on the directory from the same process waits
    /// for ever).
    func writeHoldingLock(_ changes: [String: [UInt8]?], expecting expected: [UInt8], otherBytes: Int = 0) throws(StoreError) -> [UInt8] {
        try write(changes, expecting: expected, otherBytes: otherBytes, each: false, holdingLock: true).snapshot
    }

    /// `writeEach`, called within `withLock` (which it would otherwise take).
    func writeEachHoldingLock(_ changes: [String: [UInt8]?], expecting expected: [UInt8], otherBytes: Int = 0) throws(StoreError) -> [String: StoreError] {
        try write(changes, expecting: expected, otherBytes: otherBytes, each: true, holdingLock: true).failed
    }

    /// Runs `body` holding the lock that serialises the writers of the directory's files
    /// (on `devices/`, made when missing), so what it reads no other writer changes
    /// before it writes.
    func withLock<T>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let devices = path(of: FenceDirectory.devicesName)
        do {
            try FileManager.default.createDirectory(atPath: devices, withIntermediateDirectories: true)
        } catch {
            throw StoreError("write \(devices)", (error as NSError).localizedDescription)
        }
        return try AtomicFile.withLock(on: path(of: "\(FenceDirectory.devicesName)/.lock"), body)
    }

    /// The writes of `write` and `writeEach`: with `each`, a file that fails is recorded
    /// and the others are written; otherwise the first failure is thrown. The lock is
    /// taken for the check and the writes unless the caller holds it (`holdingLock`).
    private func write(
        _ changes: [String: [UInt8]?], expecting expected: [UInt8], otherBytes: Int, each: Bool, holdingLock: Bool
    ) throws(StoreError) -> (snapshot: [UInt8], failed: [String: StoreError]) {
        guard let before = FenceDirectory.parts(of: expected) else {
            throw StoreError("write \(root)", "the snapshot it was read as is not readable")
        }
        var files = Dictionary(before.map { ($0.name, $0.bytes) }, uniquingKeysWith: { first, _ in first })
        let touched = changes.filter { files[$0.key] != $0.value }.keys.sorted()
        guard !touched.isEmpty else { return (expected, [:]) }
        let total = otherBytes + files.values.reduce(0) { $0 + $1.count }
            + touched.reduce(0) { $0 + ((changes[$1] ?? nil)?.count ?? 0) - (files[$1]?.count ?? 0) }
        guard total <= maximumBytes else {
            throw StoreError(
                "write \(root)",
                "the fence files would be \(total) bytes together; at most \(maximumBytes) are accepted (\(Self.limitName)), so nothing was written",
                code: .fenceLimit)
        }
        let writeAll = { () throws(StoreError) -> [String: StoreError] in
            for name in touched {
                guard try readFile(name) == files[name] else {
                    throw StoreError("write \(path(of: name))", "the file changed since it was read (edited by someone else); reload it and try again", code: .stale)
                }
            }
            var failed: [String: StoreError] = [:]
            for name in touched {
                do throws(StoreError) {
                    if let bytes = changes[name] ?? nil {
                        try AtomicFile.write(bytes, to: path(of: name))
                    } else if unlink(path(of: name)) != 0 && errno != ENOENT {
                        throw StoreError("remove \(path(of: name))", String(cString: strerror(errno)))
                    }
                } catch {
                    guard each else { throw error }
                    failed[name] = error
                }
            }
            return failed
        }
        let failed = holdingLock ? try writeAll() : try withLock(writeAll)
        for name in touched where failed[name] == nil { files[name] = changes[name] ?? nil }
        return (FenceDirectory.snapshot(files.map { Part(name: $0.key, bytes: $0.value) }), failed)
    }

    /// The size, modification time and inode of the root, the devices directory and the
    /// shared file: an atomic write (a rename) or a removal in either directory changes
    /// them. Edits in place are caught by the periodic read of the contents.
    func signature() -> [Int] {
        [root, path(of: FenceDirectory.devicesName), path(of: FenceDirectory.sharedName)].flatMap { path -> [Int] in
            var info = stat()
            guard stat(path, &info) == 0 else { return [-1] }
            return [Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec, Int(info.st_ino)]
        }
    }

    /// The bytes of the file `relative` to the root, nil when there is none; refused when
    /// it is not a regular file or larger than what `maximumBytes` leaves after the
    /// `before` bytes of the files read before it.
    func readFile(_ relative: String, before: Int = 0) throws(StoreError) -> [UInt8]? {
        let limitName = before == 0 ? Self.limitName : "\(Self.limitName), less the \(before) bytes of the fence files read before it"
        return try AtomicFile.read(path(of: relative), maximumBytes: maximumBytes - before, limitName: limitName)
    }

    /// `relative` under the root.
    func path(of relative: String) -> String {
        (root as NSString).appendingPathComponent(relative)
    }

    // MARK: Names

    /// The file name, relative to the root, of the fences of `device`.
    static func fileName(of device: String) -> String {
        var name = ""
        for (position, byte) in device.utf8.enumerated() {
            if isPlain(byte) && !(position == 0 && byte == UInt8(ascii: ".")) {
                name.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                name += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        if name.utf8.count + 5 > maximumNameBytes {
            let hash = String(StableHash.fnv1a(device), radix: 16).leftPadded(to: 16)
            name = "~\(hash)-\(name.prefix(100).filter { $0 != "%" })"
        }
        return "\(devicesName)/\(name).json"
    }

    /// The device a device file name (without its directory) stands for; nil for a hashed
    /// name or one that is not a device file name. Several names stand for a device
    /// (`%2f` for `%2F`, a byte left unescaped); loading refuses all but `fileName(of:)`.
    static func device(named name: String) -> String? {
        guard name.hasSuffix(".json"), !name.hasPrefix("~") else { return nil }
        var bytes: [UInt8] = []
        var iterator = Array(name.utf8.dropLast(5)).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "."):
            true
        default:
            false
        }
    }

    // MARK: Snapshots

    /// `parts` sorted by name, each as `<name>\n<byte count>\n<bytes>\n`.
    static func snapshot(_ parts: [Part]) -> [UInt8] {
        var bytes: [UInt8] = []
        for part in parts.sorted(by: { $0.name < $1.name }) {
            bytes += Array("\(part.name)\n\(part.bytes.count)\n".utf8)
            bytes += part.bytes
            bytes.append(UInt8(ascii: "\n"))
        }
        return bytes
    }

    /// The parts of a snapshot; nil when `bytes` is not one.
    static func parts(of bytes: [UInt8]) -> [Part]? {
        partRanges(of: bytes)?.map { Part(name: $0.name, bytes: Array(bytes[$0.range])) }
    }

    /// Each part of a snapshot: its name and where its bytes are in `bytes`, without
    /// copying them; nil when `bytes` is not a snapshot.
    static func partRanges(of bytes: [UInt8]) -> [(name: String, range: Range<Int>)]? {
        var parts: [(name: String, range: Range<Int>)] = []
        var position = 0
        func line() -> String? {
            guard let end = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
            defer { position = end + 1 }
            return String(decoding: bytes[position..<end], as: UTF8.self)
        }
        while position < bytes.count {
            guard let name = line(), let countText = line(), let count = Int(countText), count >= 0,
                  count < bytes.count - position else { return nil }
            parts.append((name, position..<(position + count)))
            position += count
            guard bytes[position] == UInt8(ascii: "\n") else { return nil }
            position += 1
        }
        return parts
    }
}

extension String {
    /// The text with `0`s in front up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}
