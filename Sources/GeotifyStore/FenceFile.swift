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
/// `group` to that group's devices.
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

    public let path: String
    public let limits: FenceLimits
    /// Larger files are refused before parsing.
    public let maximumBytes: Int

    public init(path: String, limits: FenceLimits = FenceLimits(), maximumBytes: Int = 256 << 20) {
        self.path = path
        self.limits = limits
        self.maximumBytes = maximumBytes
    }

    /// Reads and validates the file.
    public func load() -> Loaded {
        do {
            guard let bytes = try AtomicFile.read(path) else {
                return Loaded(book: nil, errors: [FenceProblem(file: path, reason: "no such file")], warnings: [], contents: [])
            }
            return parse(bytes)
        } catch {
            return Loaded(book: nil, errors: [FenceProblem(file: path, reason: error.reason)], warnings: [], contents: [])
        }
    }

    /// Validates `bytes` as the contents of this file.
    public func parse(_ bytes: [UInt8]) -> Loaded {
        var loaded = Loaded(book: nil, errors: [], warnings: [], contents: bytes)
        guard bytes.count <= maximumBytes else {
            loaded.errors.append(FenceProblem(file: path, reason: "the file is \(bytes.count) bytes; at most \(maximumBytes) are accepted (maximumFenceFileBytes)"))
            return loaded
        }
        let document: JSON
        do {
            document = try JSONParser().parse(bytes)
        } catch {
            loaded.errors.append(FenceProblem(file: path, line: error.line, reason: "not valid JSON: \(error.reason) (column \(error.column))"))
            return loaded
        }
        guard case .object(let root) = document else {
            loaded.errors.append(FenceProblem(file: path, line: 1, reason: "the file must hold a JSON object with \"devices\", not \(document.kindDescription)"))
            return loaded
        }
        for key in root.keys where !["devices", "groups", "shared"].contains(key) {
            loaded.errors.append(FenceProblem(file: path, line: root.line, reason: "unknown top-level key \"\(key)\" (expected \"devices\", \"groups\" or \"shared\")"))
        }
        guard let devicesValue = root["devices"] else {
            loaded.errors.append(FenceProblem(file: path, line: root.line, reason: "missing \"devices\" (an object of device identifier → array of fences)"))
            return loaded
        }
        guard case .object(let devicesObject) = devicesValue else {
            loaded.errors.append(FenceProblem(file: path, line: root.line, reason: "\"devices\" must be an object, not \(devicesValue.kindDescription)"))
            return loaded
        }
        for duplicate in devicesObject.duplicateKeys {
            loaded.errors.append(FenceProblem(file: path, line: devicesObject.line, device: duplicate, reason: "the device appears more than once"))
        }

        var devices: [String: [Fence]] = [:]
        for member in devicesObject.members {
            let device = member.key
            if let problem = Identifier.problem(device: device) {
                loaded.errors.append(FenceProblem(file: path, line: devicesObject.line, reason: problem))
                continue
            }
            guard case .array(let elements) = member.value else {
                loaded.errors.append(FenceProblem(
                    file: path, line: member.value.objectValue?.line ?? devicesObject.line, device: device,
                    reason: "the fences of a device must be an array, not \(member.value.kindDescription)"))
                continue
            }
            if elements.count > limits.maximumFencesPerDevice {
                loaded.errors.append(FenceProblem(
                    file: path, line: devicesObject.line, device: device,
                    reason: "\(elements.count) fences, but a device may have at most \(limits.maximumFencesPerDevice)"))
            }
            devices[device] = decodeList(elements, device: device, scope: "device", into: &loaded).map(\.fence)
        }
        let groups = decodeGroups(root["groups"], line: root.line, into: &loaded)
        let shared = decodeShared(root["shared"], groups: groups, line: root.line, into: &loaded)
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
        if loaded.errors.isEmpty { loaded.book = FenceBook(devices: devices, groups: groups, shared: shared) }
        return loaded
    }

    /// Decodes a list of fences, reporting every problem; identifiers must be unique
    /// within the list. `scope` names what the list belongs to in messages.
    private func decodeList(
        _ elements: [JSON], device: String?, scope: String, into loaded: inout Loaded
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
                        file: path, line: object.line, fence: object["identifier"]?.stringValue ?? "#\(position + 1)",
                        reason: "\"group\" must be the name of a group, not \(value.kindDescription)"))
                }
                object["group"] = nil
                json = .object(object)
            }
            let decoded = FenceCodec.decode(json, limits: limits)
            let line = element.objectValue?.line
            let name = decoded.identifier ?? "#\(position + 1)"
            for reason in decoded.errors {
                loaded.errors.append(FenceProblem(file: path, line: line, device: device, fence: name, reason: reason))
            }
            for reason in decoded.warnings {
                loaded.warnings.append(FenceProblem(file: path, line: line, device: device, fence: name, reason: reason))
            }
            let key = "\(group ?? "")\u{1F}\(decoded.identifier ?? "")"
            if decoded.identifier != nil, !seen.insert(key).inserted {
                loaded.errors.append(FenceProblem(
                    file: path, line: line, device: device, fence: name,
                    reason: "the identifier is used by another fence of this \(scope); identifiers must be unique per \(scope)"))
                continue
            }
            if let fence = decoded.fence { fences.append((fence, group)) }
        }
        return fences
    }

    /// `"groups": {"family": ["alice/phone", "bob/phone"]}`: named sets of devices that
    /// shared fences can apply to.
    private func decodeGroups(_ value: JSON?, line: Int, into loaded: inout Loaded) -> [String: [String]] {
        guard let value else { return [:] }
        guard case .object(let object) = value else {
            loaded.errors.append(FenceProblem(file: path, line: line, reason: "\"groups\" must be an object of group name → array of devices, not \(value.kindDescription)"))
            return [:]
        }
        var groups: [String: [String]] = [:]
        for member in object.members {
            if let problem = Identifier.problem(fence: member.key) {
                loaded.errors.append(FenceProblem(file: path, line: object.line, reason: "group \"\(member.key)\": \(problem.replacingOccurrences(of: "fence identifier", with: "group name"))"))
                continue
            }
            if member.key == SharedFences.everyDevice {
                loaded.errors.append(FenceProblem(file: path, line: object.line, reason: "\"\(SharedFences.everyDevice)\" cannot be a group name: it names the fences shared with every device"))
                continue
            }
            guard let list = member.value.arrayValue, let names = Optional(list.compactMap(\.stringValue)), names.count == list.count else {
                loaded.errors.append(FenceProblem(file: path, line: object.line, reason: "group \"\(member.key)\" must be an array of device identifiers"))
                continue
            }
            for device in names {
                if let problem = Identifier.problem(device: device) {
                    loaded.errors.append(FenceProblem(file: path, line: object.line, reason: "group \"\(member.key)\": \(problem)"))
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
        _ value: JSON?, groups: [String: [String]], line: Int, into loaded: inout Loaded
    ) -> [String: SharedFences] {
        guard let value else { return [:] }
        guard case .array(let elements) = value else {
            loaded.errors.append(FenceProblem(file: path, line: line, reason: "\"shared\" must be an array of fences, not \(value.kindDescription)"))
            return [:]
        }
        var byOwner: [String: [Fence]] = [:]
        for (fence, group) in decodeList(elements, device: nil, scope: "shared set", into: &loaded) {
            if let group, groups[group] == nil {
                loaded.errors.append(FenceProblem(
                    file: path, fence: fence.identifier,
                    reason: "the group \"\(group)\" is not defined in \"groups\""))
                continue
            }
            byOwner[group ?? SharedFences.everyDevice, default: []].append(fence)
        }
        return Dictionary(uniqueKeysWithValues: byOwner.map { ($0.key, SharedFences(owner: $0.key, fences: $0.value)) })
    }

    /// The file's text for `book`: pretty-printed, keys sorted, devices and fences in
    /// order; groups and shared fences when there are any (`FenceFileText`).
    public static func contents(of book: FenceBook) -> [UInt8] {
        var text = FenceFileText()
        return text.contents(of: book)
    }

    /// Writes `book` atomically, provided the file still holds `expected` (the bytes it
    /// was loaded from); otherwise refuses with a "changed since it was read" error.
    public func write(_ book: FenceBook, expecting expected: [UInt8]) throws(StoreError) -> [UInt8] {
        var text = FenceFileText()
        return try write(book, expecting: expected, text: &text)
    }

    /// `write(_:expecting:)` with the text made by `text`, which remembers each device's
    /// text for the next write.
    public func write(_ book: FenceBook, expecting expected: [UInt8], text: inout FenceFileText) throws(StoreError) -> [UInt8] {
        let bytes = text.contents(of: book)
        try AtomicFile.withLock(on: path) { () throws(StoreError) in
            let current = try AtomicFile.read(path) ?? []
            guard current == expected else {
                throw StoreError("write \(path)", "the file changed since it was read (edited by someone else); reload it and try again")
            }
            try AtomicFile.write(bytes, to: path)
        }
        return bytes
    }
}
