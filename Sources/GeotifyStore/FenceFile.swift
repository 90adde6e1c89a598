import GeotifyCore
import GeotifyJSON

/// The fence file: every device's fences, the source of truth that people edit by hand
/// and keep in git.
///
/// ```json
/// { "devices": { "alice/phone": [
///     { "identifier": "home", "latitude": 52.52, "longitude": 13.405,
///       "radius": 100, "note": "Welcome home", "eventType": "onEntry" } ] } }
/// ```
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

    public init(path: String, limits: FenceLimits = FenceLimits()) {
        self.path = path
        self.limits = limits
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
        for key in root.keys where key != "devices" {
            loaded.errors.append(FenceProblem(file: path, line: root.line, reason: "unknown top-level key \"\(key)\" (expected \"devices\")"))
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
            var fences: [Fence] = []
            var seen: Set<String> = []
            for (position, element) in elements.enumerated() {
                let decoded = FenceCodec.decode(element, limits: limits)
                let line = element.objectValue?.line
                let name = decoded.identifier ?? "#\(position + 1)"
                for reason in decoded.errors {
                    loaded.errors.append(FenceProblem(file: path, line: line, device: device, fence: name, reason: reason))
                }
                for reason in decoded.warnings {
                    loaded.warnings.append(FenceProblem(file: path, line: line, device: device, fence: name, reason: reason))
                }
                if let identifier = decoded.identifier, !seen.insert(identifier).inserted {
                    loaded.errors.append(FenceProblem(
                        file: path, line: line, device: device, fence: name,
                        reason: "the identifier is used by another fence of this device; identifiers must be unique per device"))
                    continue
                }
                if let fence = decoded.fence { fences.append(fence) }
            }
            devices[device] = fences
        }
        if loaded.errors.isEmpty { loaded.book = FenceBook(devices: devices) }
        return loaded
    }

    /// The file's text for `book`: pretty-printed, keys sorted, devices and fences in order.
    public static func contents(of book: FenceBook) -> [UInt8] {
        var devices = JSONObject()
        for device in book.devices.keys.sorted() {
            devices[device] = .array(book.fences(of: device).map(FenceCodec.encode))
        }
        return JSONWriter(pretty: true, sortedKeys: true).bytes(["devices": .object(devices)])
    }

    /// Writes `book` atomically, provided the file still holds `expected` (the bytes it
    /// was loaded from); otherwise refuses with a "changed since it was read" error.
    public func write(_ book: FenceBook, expecting expected: [UInt8]) throws(StoreError) -> [UInt8] {
        let bytes = FenceFile.contents(of: book)
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
