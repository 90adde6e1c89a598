import Foundation
import GeotifyCore
import GeotifyJSON

/// The fence file: every device's fences, the source of truth that people edit by hand
/// and keep in git.
///
/// ```json
/// { "devices": { "alice/phone": [
///     { "identifier": "home", "latitude": 52.52, "longitude": 13.405,
///       "radius": 100, "note": "Welcome home", "eventType": "onEntry" } ] },
///   "groups": { "family": ["alice/phone", "bob/phone"] },
///   "shared": [ { "identifier": "school", ..., "group": "family" },
///               { "identifier": "office", ... } ] }
/// ```
/// `groups` and `shared` are optional: shared fences apply to every device, or with
/// `group` to that group's devices. A `path` that is a directory (or ends in `/`) holds
/// the same fences as one file per device plus one for the groups and shared fences
/// (`FenceDirectory`): what several instances sharing the devices write to.
/// Loading reports every problem with the file, line, device and fence it concerns;
/// a file with any error yields no book, so the last good one stays in force. Writes
/// are atomic, pretty-printed with sorted keys, and refused when the file changed
/// since it was read, so two writers never silently lose each other's changes.
public struct FenceFile: Sendable {
    /// What loading the file produced.
    public struct Loaded: Sendable {
        /// The fences, when the file had no errors (revisions not yet assigned).
        public var book: FenceBook?
        public var errors: [FenceProblem]
        /// Clamped radii and other things applied with a change.
        public var warnings: [FenceProblem]
        /// The bytes that were read, for detecting a concurrent edit before a write.
        public var contents: [UInt8]
    }

    /// How the fences are stored.
    public enum Layout: Sendable, Equatable {
        /// One file with every device.
        case file
        /// A directory with a file per device (`FenceDirectory`).
        case directory
    }

    public let path: String
    public let limits: FenceLimits
    /// Larger files (for a directory: all its files together) are refused before parsing.
    public let maximumBytes: Int
    public let layout: Layout
    /// For a directory: only the files of this instance's devices are read and written.
    public let shard: ShardAssignment?

    /// The fences at `path`: a fence directory when the path ends in `/` or is a
    /// directory that holds one (`shared.json` or `devices/`), a file otherwise (so a
    /// directory in place of a fence file is reported as unreadable, not taken for an
    /// empty fence directory).
    public init(path: String, limits: FenceLimits = FenceLimits(), maximumBytes: Int = 256 << 20, shard: ShardAssignment? = nil) {
        self.path = path
        self.limits = limits
        self.maximumBytes = maximumBytes
        let base = path.hasSuffix("/") ? path : path + "/"
        let manager = FileManager.default
        let holdsFences = manager.fileExists(atPath: base + FenceDirectory.sharedName)
            || manager.fileExists(atPath: base + FenceDirectory.devicesName)
        layout = path.hasSuffix("/") || holdsFences ? .directory : .file
        self.shard = (shard?.count ?? 1) > 1 ? shard : nil
    }

    /// This file (its layout as it is) without a bound on its size, to validate fences
    /// whose size is counted otherwise: an import into a fence directory, whose write
    /// counts the files as they are on disk, as a fence command's write does.
    package var unbounded: FenceFile {
        FenceFile(path: path, limits: limits, layout: layout, shard: shard)
    }

    private init(path: String, limits: FenceLimits, layout: Layout, shard: ShardAssignment?) {
        self.path = path
        self.limits = limits
        maximumBytes = .max
        self.layout = layout
        self.shard = shard
    }

    /// For a fence directory, the directory a fence command writes a device's file in:
    /// `devices/`, or the fence directory itself while `devices/` does not exist (it is
    /// made there); nil for a single file.
    public var deviceFilesDirectory: String? {
        guard layout == .directory else { return nil }
        let root = path.hasSuffix("/") ? String(path.dropLast()) : path
        let devices = root + "/" + FenceDirectory.devicesName
        return FileManager.default.fileExists(atPath: devices) ? devices : root
    }

    /// The contents: the file's bytes, or a snapshot of the directory's files; nil when
    /// there is no such file or directory. Refused, without reading it all, when larger
    /// than `maximumBytes`, or when a file is not a regular file (a FIFO, a device):
    /// `AtomicFile.read(_:maximumBytes:limitName:)`.
    public func read() throws(StoreError) -> [UInt8]? {
        switch layout {
        case .file: try AtomicFile.read(path, maximumBytes: maximumBytes, limitName: FenceDirectory.limitName)
        case .directory: try directory.read()
        }
    }

    /// What changes when the fences are written or replaced: the file's size, time and
    /// inode, or those of the directory's parts (`FenceDirectory.signature`); empty when
    /// the file cannot be read.
    public func signature() -> [Int] {
        guard layout == .file else { return directory.signature() }
        var info = stat()
        guard stat(path, &info) == 0 else { return [] }
        return [Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec, Int(info.st_ino)]
    }

    /// Reads and validates the file; its fences get their revisions from `revisions`
    /// (by default every fence is at revision 0: a book with no history).
    public func load(revisions: FenceRevisions = .unknown) -> Loaded {
        do {
            guard let bytes = try read() else {
                return Loaded(book: nil, errors: [FenceProblem(file: path, reason: "no such \(layout == .file ? "file" : "directory")")], warnings: [], contents: [])
            }
            return parse(bytes, revisions: revisions)
        } catch {
            // In a fence directory, the file of it that failed.
            return Loaded(book: nil, errors: [FenceProblem(file: error.file ?? path, reason: error.reason)], warnings: [], contents: [])
        }
    }

    /// The size `bytes` (this file's contents, or a directory's snapshot) counts against
    /// `maximumBytes`: a directory's limit is for its files' bytes together, as reading and
    /// writing count them.
    package func size(of bytes: [UInt8]) -> Int {
        layout == .file ? bytes.count : FenceDirectory.partRanges(of: bytes)?.reduce(0) { $0 + $1.range.count } ?? bytes.count
    }

    /// Validates `bytes` as the contents of this file (or directory snapshot); the fences
    /// get their revisions from `revisions` as they are decoded, so each is made once.
    public func parse(_ bytes: [UInt8], revisions: FenceRevisions = .unknown) -> Loaded {
        var revisions = revisions
        var loaded = Loaded(book: nil, errors: [], warnings: [], contents: bytes)
        let size = size(of: bytes)
        guard size <= maximumBytes else {
            loaded.errors.append(FenceProblem(file: path, reason: "the \(layout == .file ? "file is" : "fence files are") \(size) bytes; at most \(maximumBytes) are accepted (maximumFenceFileBytes)"))
            return loaded
        }
        guard layout == .directory else {
            guard var document = decodeDocument(bytes, file: path, keys: ["devices", "groups", "shared"], revisions: &revisions, into: &loaded) else { return loaded }
            // Device by device (over a copy of the keys, so the dictionary's storage stays
            // unique), so that only one device's fences are held twice at a time.
            for device in Array(document.devices.keys) {
                document.devices[device] = revisions.revise(document.devices[device] ?? [], scope: device)
            }
            return assemble(document, revision: revisions.revision, into: &loaded)
        }
        guard let parts = FenceDirectory.parts(of: bytes) else {
            loaded.errors.append(FenceProblem(file: path, reason: "the directory's contents are not a snapshot of its files"))
            return loaded
        }
        var merged = Document(devices: [:], groups: [:], shared: [:])
        var origin: [String: String] = [:]
        for part in parts {
            let file = directory.path(of: part.name)
            if part.name == FenceDirectory.sharedName {
                guard let document = decodeDocument(part.bytes, file: file, keys: ["groups", "shared"], revisions: &revisions, into: &loaded) else { continue }
                merged.groups = document.groups
                merged.shared = document.shared
                continue
            }
            guard part.name.hasSuffix(".json") else {
                loaded.errors.append(FenceProblem(file: file, reason: "not a device file: the files in \(FenceDirectory.devicesName)/ are <device>.json"))
                continue
            }
            guard let document = decodeDocument(part.bytes, file: file, keys: ["devices"], revisions: &revisions, into: &loaded) else { continue }
            let named = FenceDirectory.device(named: String(part.name.dropFirst(FenceDirectory.devicesName.count + 1)))
            guard document.devices.count == 1, let (device, fences) = document.devices.first, named == nil || named == device else {
                let expected = named.map { "the device \"\($0)\" its name stands for" } ?? "one device"
                loaded.errors.append(FenceProblem(file: file, reason: "a device file must hold exactly \(expected) in \"devices\""))
                continue
            }
            // Writes go to the device's canonical name: a file under another name that
            // decodes to it (`%2f`, a character left unescaped), or under a hashed name
            // (`~...`) that is not the hash of the device it holds, would become a second
            // file for the device at its next change, or take another device's name.
            let canonical = FenceDirectory.fileName(of: device)
            if part.name != canonical {
                loaded.errors.append(FenceProblem(
                    file: file, device: device,
                    reason: "not the device's file name: the fences of \"\(device)\" are written to \(directory.path(of: canonical)); rename the file to that"))
                continue
            }
            if let shard, !shard.owns(device) { continue }
            if let first = origin[device] {
                loaded.errors.append(FenceProblem(file: file, device: device, reason: "the device also has the file \(first)"))
                continue
            }
            origin[device] = file
            merged.devices[device] = revisions.revise(fences, scope: device)
        }
        return assemble(merged, revision: revisions.revision, into: &loaded)
    }

    /// The fences of one JSON document: devices, groups and shared sets.
    private struct Document {
        var devices: [String: [Fence]]
        var groups: [String: [String]]
        var shared: [String: SharedFences]
    }

    /// Decodes one document of `file`, which may hold the top-level `keys` (and must
    /// hold `devices` when that is one of them), reporting every problem; nil when it is
    /// not a JSON object of that form. Shared sets are made with their revisions from
    /// `revisions`; the devices' fences are left at revision 0 for the caller to revise
    /// (a fence directory drops the devices of other instances first). Each device's
    /// fences are made as the parser reads that device (`JSONParser.parse(_:streamingMembersOf:_:)`),
    /// so a large file's devices never stand as one tree beside their fences.
    private func decodeDocument(
        _ bytes: [UInt8], file: String, keys: [String], revisions: inout FenceRevisions, into loaded: inout Loaded
    ) -> Document? {
        let requiresDevices = keys.contains("devices")
        // What each object named "devices" gave, by its occurrence; kept apart until the
        // whole text is known to be JSON (and which occurrence counts: the last).
        var streamed: [Int: StreamedDevices] = [:]
        var document: JSON
        do {
            if requiresDevices {
                document = try JSONParser().parse(bytes, streamingMembersOf: "devices") { member in
                    streamed[member.occurrence, default: StreamedDevices(line: member.objectLine)]
                        .decode(member.name, member.value, file: file, with: self)
                }
            } else {
                document = try JSONParser().parse(bytes)
            }
        } catch {
            loaded.errors.append(FenceProblem(file: file, line: error.line, reason: "not valid JSON: \(error.reason) (column \(error.column))"))
            return nil
        }
        guard case .object(let root) = document else {
            let expected = requiresDevices ? "a JSON object with \"devices\"" : "a JSON object"
            loaded.errors.append(FenceProblem(file: file, line: 1, reason: "the file must hold \(expected), not \(document.kindDescription)"))
            return nil
        }
        document = .null
        for key in root.keys where !keys.contains(key) {
            let expected = keys.map { "\"\($0)\"" }
            let list = expected.count == 1 ? expected[0] : expected.dropLast().joined(separator: ", ") + " or " + expected.last!
            loaded.errors.append(FenceProblem(file: file, line: root.line, reason: "unknown top-level key \"\(key)\" (expected \(list))"))
        }
        var devices: [String: [Fence]] = [:]
        if requiresDevices {
            // The last member named "devices", as `root["devices"]` reads it.
            let named = root.members.filter { $0.key == "devices" }
            guard let last = named.last else {
                loaded.errors.append(FenceProblem(file: file, line: root.line, reason: "missing \"devices\" (an object of device identifier → array of fences)"))
                return nil
            }
            guard case .object(let placeholder) = last.value else {
                loaded.errors.append(FenceProblem(file: file, line: root.line, reason: "\"devices\" must be an object, not \(last.value.kindDescription)"))
                return nil
            }
            // Streamed objects are the ones left in the tree as objects, counted in order.
            let occurrence = named.filter { $0.value.objectValue != nil }.count - 1
            let result = streamed[occurrence] ?? StreamedDevices(line: placeholder.line)
            for duplicate in result.duplicates {
                loaded.errors.append(FenceProblem(file: file, line: result.line, device: duplicate, reason: "the device appears more than once"))
            }
            loaded.errors += result.scratch.errors
            loaded.warnings += result.scratch.warnings
            devices = result.devices
        }
        let groups = keys.contains("groups") ? decodeGroups(root["groups"], file: file, line: root.line, into: &loaded) : [:]
        let shared = keys.contains("shared")
            ? decodeShared(root["shared"], groups: groups, file: file, line: root.line, revisions: &revisions, into: &loaded) : [:]
        return Document(devices: devices, groups: groups, shared: shared)
    }

    /// The devices of one object named `"devices"` (`{"alice/phone": [fence, ...]}`),
    /// made device by device as the parser reads them, with the problems found.
    private struct StreamedDevices {
        /// The line of the `"devices"` object.
        let line: Int
        var devices: [String: [Fence]] = [:]
        /// Devices named again, once for each repetition, in order.
        var duplicates: [String] = []
        private var seen: Set<String> = []
        /// The problems of these devices' fences (its book and contents unused).
        var scratch = Loaded(book: nil, errors: [], warnings: [], contents: [])

        init(line: Int) {
            self.line = line
        }

        /// Makes the fences of `device` from `value`, its array of fences.
        mutating func decode(_ device: String, _ value: JSON, file: String, with reader: FenceFile) {
            if !seen.insert(device).inserted { duplicates.append(device) }
            if let problem = Identifier.problem(device: device) {
                scratch.errors.append(FenceProblem(file: file, line: line, reason: problem))
                return
            }
            guard case .array(let elements) = value else {
                scratch.errors.append(FenceProblem(
                    file: file, line: value.objectValue?.line ?? line, device: device,
                    reason: "the fences of a device must be an array, not \(value.kindDescription)"))
                return
            }
            if elements.count > reader.limits.maximumFencesPerDevice {
                scratch.errors.append(FenceProblem(
                    file: file, line: line, device: device,
                    reason: "\(elements.count) fences, but a device may have at most \(reader.limits.maximumFencesPerDevice)"))
            }
            devices[device] = reader.decodeList(elements, device: device, scope: "device", file: file, into: &scratch).map(\.fence)
        }
    }

    /// The book of `document` once the identifiers of each device's own fences are
    /// checked against the shared fences that apply to it; none when anything is wrong.
    private func assemble(_ document: Document, revision: Int, into loaded: inout Loaded) -> Loaded {
        let (devices, groups, shared) = (document.devices, document.groups, document.shared)
        for (device, fences) in devices {
            let applying = shared.filter { $0.key == SharedFences.everyDevice || groups[$0.key]?.contains(device) == true }
            for fence in fences {
                for (owner, set) in applying.sorted(by: { $0.key < $1.key }) where set.fence(fence.identifier) != nil {
                    loaded.errors.append(FenceProblem(
                        file: path, device: device, fence: fence.identifier,
                        reason: "the identifier is also a fence shared with \(owner == SharedFences.everyDevice ? "every device" : "the group \"\(owner)\""), which applies to this device; identifiers must be unique per device"))
                }
            }
        }
        if loaded.errors.isEmpty { loaded.book = FenceBook(devices: devices, groups: groups, shared: shared, revision: revision) }
        return loaded
    }

    /// The directory layout's reader and writer.
    var directory: FenceDirectory {
        FenceDirectory(root: path, shard: shard, maximumBytes: maximumBytes)
    }

    /// Decodes a list of fences, reporting every problem; identifiers must be unique
    /// within the list. `scope` names what the list belongs to in messages.
    private func decodeList(
        _ elements: [JSON], device: String?, scope: String, file: String, into loaded: inout Loaded
    ) -> [(fence: Fence, group: String?)] {
        var fences: [(Fence, String?)] = []
        var seen: Set<String> = []
        for (position, element) in elements.enumerated() {
            var json = element
            var group: String?
            if device == nil, case .object(var object) = element, let value = object["group"] {
                group = value.stringValue
                if group == nil {
                    loaded.errors.append(FenceProblem(
                        file: file, line: object.line, fence: object["identifier"]?.stringValue ?? "#\(position + 1)",
                        reason: "\"group\" must be the name of a group, not \(value.kindDescription)"))
                }
                object["group"] = nil
                json = .object(object)
            }
            let decoded = FenceCodec.decode(json, limits: limits)
            let line = element.objectValue?.line
            let name = decoded.identifier ?? "#\(position + 1)"
            for reason in decoded.errors {
                loaded.errors.append(FenceProblem(file: file, line: line, device: device, fence: name, reason: reason))
            }
            for reason in decoded.warnings {
                loaded.warnings.append(FenceProblem(file: file, line: line, device: device, fence: name, reason: reason))
            }
            let key = "\(group ?? "")\u{1F}\(decoded.identifier ?? "")"
            if decoded.identifier != nil, !seen.insert(key).inserted {
                loaded.errors.append(FenceProblem(
                    file: file, line: line, device: device, fence: name,
                    reason: "the identifier is used by another fence of this \(scope); identifiers must be unique per \(scope)"))
                continue
            }
            if let fence = decoded.fence { fences.append((fence, group)) }
        }
        return fences
    }

    /// `"groups": {"family": ["alice/phone", "bob/phone"]}`: named sets of devices that
    /// shared fences can apply to.
    private func decodeGroups(_ value: JSON?, file: String, line: Int, into loaded: inout Loaded) -> [String: [String]] {
        guard let value else { return [:] }
        guard case .object(let object) = value else {
            loaded.errors.append(FenceProblem(file: file, line: line, reason: "\"groups\" must be an object of group name → array of devices, not \(value.kindDescription)"))
            return [:]
        }
        var groups: [String: [String]] = [:]
        for member in object.members {
            if let problem = Identifier.problem(fence: member.key) {
                loaded.errors.append(FenceProblem(file: file, line: object.line, reason: "group \"\(member.key)\": \(problem.replacingOccurrences(of: "fence identifier", with: "group name"))"))
                continue
            }
            if member.key == SharedFences.everyDevice {
                loaded.errors.append(FenceProblem(file: file, line: object.line, reason: "\"\(SharedFences.everyDevice)\" cannot be a group name: it names the fences shared with every device"))
                continue
            }
            guard let list = member.value.arrayValue, let names = Optional(list.compactMap(\.stringValue)), names.count == list.count else {
                loaded.errors.append(FenceProblem(file: file, line: object.line, reason: "group \"\(member.key)\" must be an array of device identifiers"))
                continue
            }
            for device in names {
                if let problem = Identifier.problem(device: device) {
                    loaded.errors.append(FenceProblem(file: file, line: object.line, reason: "group \"\(member.key)\": \(problem)"))
                }
            }
            groups[member.key] = names
        }
        return groups
    }

    /// `"shared": [fence, ...]`: fences for every device, or, with `"group": name`, for
    /// the devices of that group. Not limited by `maximumFencesPerDevice`: shared sets
    /// are indexed and may be very large.
    private func decodeShared(
        _ value: JSON?, groups: [String: [String]], file: String, line: Int, revisions: inout FenceRevisions, into loaded: inout Loaded
    ) -> [String: SharedFences] {
        guard let value else { return [:] }
        guard case .array(let elements) = value else {
            loaded.errors.append(FenceProblem(file: file, line: line, reason: "\"shared\" must be an array of fences, not \(value.kindDescription)"))
            return [:]
        }
        var byOwner: [String: [Fence]] = [:]
        for (fence, group) in decodeList(elements, device: nil, scope: "shared set", file: file, into: &loaded) {
            if let group, groups[group] == nil {
                loaded.errors.append(FenceProblem(
                    file: file, fence: fence.identifier,
                    reason: "the group \"\(group)\" is not defined in \"groups\""))
                continue
            }
            byOwner[group ?? SharedFences.everyDevice, default: []].append(fence)
        }
        var sets: [String: SharedFences] = [:]
        for (owner, fences) in byOwner {
            sets[owner] = SharedFences(owner: owner, fences: revisions.revise(fences, scope: FenceBook.scope(ofShared: owner)))
        }
        return sets
    }

    /// The file's text for `book`: pretty-printed, keys sorted, devices and fences in
    /// order; groups and shared fences when there are any (`FenceFileText`).
    public static func contents(of book: FenceBook) -> [UInt8] {
        var text = FenceFileText()
        return text.contents(of: book)
    }

    /// What `book` is in this layout: the file's text, or the directory's snapshot.
    public func contents(of book: FenceBook) -> [UInt8] {
        guard layout == .directory else { return FenceFile.contents(of: book) }
        var parts = book.devices.map { device, fences in
            FenceDirectory.Part(name: FenceDirectory.fileName(of: device), bytes: FenceFile.contents(of: FenceBook(devices: [device: fences])))
        }
        if !book.groups.isEmpty || !book.shared.isEmpty {
            parts.append(FenceDirectory.Part(name: FenceDirectory.sharedName, bytes: FenceFile.sharedContents(of: book)))
        }
        return FenceDirectory.snapshot(parts)
    }

    /// The shared file of a directory for `book`: its groups and shared fences.
    static func sharedContents(of book: FenceBook) -> [UInt8] {
        var root = JSONObject()
        addShared(of: book, to: &root)
        return JSONWriter(pretty: true, sortedKeys: true).bytes(.object(root))
    }

    /// Adds the groups and shared fences of `book` to a document, when there are any.
    static func addShared(of book: FenceBook, to root: inout JSONObject) {
        if !book.groups.isEmpty {
            var groups = JSONObject()
            for (group, members) in book.groups.sorted(by: { $0.key < $1.key }) { groups[group] = .array(members.map(JSON.string)) }
            root["groups"] = .object(groups)
        }
        if !book.shared.isEmpty {
            var shared: [JSON] = []
            let groups = book.shared.keys.filter { $0 != SharedFences.everyDevice }.sorted()
            let owners = (book.shared[SharedFences.everyDevice] == nil ? [] : [SharedFences.everyDevice]) + groups
            for owner in owners {
                for fence in book.shared[owner]?.fences ?? [] {
                    var object = FenceCodec.encode(fence).objectValue ?? JSONObject()
                    if owner != SharedFences.everyDevice { object["group"] = .string(owner) }
                    shared.append(.object(object))
                }
            }
            root["shared"] = .array(shared)
        }
    }

    /// Writes `book` atomically, provided the file still holds `expected` (the bytes it
    /// was loaded from); otherwise refuses with a "changed since it was read" error (its
    /// code `stale`; a failure to write has none).
    ///
    /// In a directory only the files of `devices` are written (or removed, for a device
    /// the book no longer has), each refused if it changed since `expected`; with nil,
    /// every device file and the shared file that differ from `book`.
    public func write(_ book: FenceBook, expecting expected: [UInt8], devices: [String]? = nil) throws(StoreError) -> [UInt8] {
        guard layout == .file else {
            var changes = FenceFile.deviceFiles(of: devices ?? Array(book.devices.keys), in: book)
            if devices == nil {
                for part in FenceDirectory.parts(of: expected) ?? [] where part.name != FenceDirectory.sharedName && changes[part.name] == nil {
                    changes[part.name] = .some(nil)
                }
                changes[FenceDirectory.sharedName] = book.groups.isEmpty && book.shared.isEmpty ? .some(nil) : FenceFile.sharedContents(of: book)
            }
            return try directory.write(changes, expecting: expected)
        }
        let bytes = FenceFile.contents(of: book)
        try checkSize(of: bytes)
        try AtomicFile.withLock(on: path) { () throws(StoreError) in try writeHoldingLock(bytes, expecting: expected) }
        return bytes
    }

    /// Writes a single file's `bytes` atomically, provided it still holds `expected`,
    /// refused as `stale` otherwise; called holding its lock (`AtomicFile.withLock(on:)`).
    func writeHoldingLock(_ bytes: [UInt8], expecting expected: [UInt8]) throws(StoreError) {
        let current = try AtomicFile.read(path, maximumBytes: maximumBytes, limitName: FenceDirectory.limitName) ?? []
        guard current == expected else {
            throw StoreError("write \(path)", "the file changed since it was read (edited by someone else); reload it and try again", code: .stale)
        }
        try AtomicFile.write(bytes, to: path)
    }

    /// Refuses (`fenceLimit`) to write a single fence file's `bytes` when they are more
    /// than `maximumBytes`: the file would not load again.
    func checkSize(of bytes: [UInt8]) throws(StoreError) {
        guard bytes.count > maximumBytes else { return }
        throw StoreError(
            "write \(path)",
            "the fence file would be \(bytes.count) bytes; at most \(maximumBytes) are accepted (\(FenceDirectory.limitName)), so nothing was written",
            code: .fenceLimit)
    }

    /// The files of `devices` in a fence directory as `book` has them, by name: each
    /// device's bytes, or nil to remove the file of a device the book no longer has.
    static func deviceFiles(of devices: [String], in book: FenceBook) -> [String: [UInt8]?] {
        var files: [String: [UInt8]?] = [:]
        for device in devices {
            // `updateValue`: a subscript assignment of nil would drop the entry, not mark
            // the file for removal.
            files.updateValue(book.devices[device].map { FenceFile.contents(of: FenceBook(devices: [device: $0])) }, forKey: FenceDirectory.fileName(of: device))
        }
        return files
    }
}
