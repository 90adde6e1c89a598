import GeotifyCore
import GeotifyJSON

/// A proposed change to one device's fences: the app's Add, Edit and Delete, and an
/// import's list. The command line and MQTT commands both express what they want as a
/// change, so both validate alike: every fence goes through `FenceCodec.decode`, the
/// same as loading the fence file, so the file stays loadable after any change.
///
/// Applying is pure: it turns a book into the book the change makes, or refuses with a
/// specific `FenceChangeError`. `FenceFile.apply(_:expecting:)` writes the result.
public enum FenceChange: Sendable, Equatable {
    /// Adds one fence, in the fence file's JSON form, at the end of the device's list;
    /// a device not in the file is created.
    case add(device: String, fence: JSON)
    /// Replaces the given fields of the fence `identifier`, as a JSON merge patch
    /// (RFC 7396): a field set to `null` is removed (to drop a rule, or to switch
    /// between `polygon` and `latitude`/`longitude`/`radius`); an `identifier` field
    /// renames the fence.
    case edit(device: String, identifier: String, fields: JSONObject)
    /// Removes the fence `identifier`; a device left without fences stays in the file
    /// with an empty list, so it stays known (`strictDevices`).
    case delete(device: String, identifier: String)
    /// Adds several fences at the end of the device's list, all or none (an import
    /// that keeps what is there); a device not in the file is created.
    case append(device: String, fences: [JSON])
    /// Replaces the device's whole list (an import that replaces what is there).
    case replaceAll(device: String, fences: [JSON])

    /// What applying a change produced.
    public struct Applied: Sendable, Equatable {
        /// The book with the change made.
        public var book: FenceBook
        /// The fence as added or edited; nil for the other changes.
        public var fence: Fence?
        /// The fence before an edit, or the one deleted; nil for the other changes.
        public var previous: Fence?
        /// What was adjusted rather than refused (a clamped radius), to show the person.
        public var warnings: [FenceProblem]

        /// The outcome of a change, as `apply(to:limits:)` reports it.
        public init(book: FenceBook, fence: Fence?, previous: Fence?, warnings: [FenceProblem]) {
            self.book = book
            self.fence = fence
            self.previous = previous
            self.warnings = warnings
        }
    }

    /// The device whose fences the change is about.
    public var device: String {
        switch self {
        case .add(let device, _), .edit(let device, _, _), .delete(let device, _),
             .append(let device, _), .replaceAll(let device, _):
            device
        }
    }

    /// What a change makes of one device's own fences.
    public struct Outcome: Sendable, Equatable {
        /// The device's fences after the change.
        public var fences: [Fence]
        /// The fence as added or edited; nil for the other changes.
        public var fence: Fence?
        /// The fence before an edit, or the one deleted; nil for the other changes.
        public var previous: Fence?
        /// What was adjusted rather than refused (a clamped radius).
        public var warnings: [FenceProblem]
    }

    /// The book `book` becomes with this change, validated against `limits`: every
    /// fence decodes, identifiers are unique per device, no device has more than
    /// `maximumFencesPerDevice` fences. New fences keep `addedRevision` 0; the bridge
    /// assigns revisions when it loads the changed file (`FenceBook.revised(from:)`).
    public func apply(to book: FenceBook, limits: FenceLimits) throws(FenceChangeError) -> Applied {
        let outcome = try apply(toFencesOf: book.devices[device], limits: limits)
        var devices = book.devices
        devices[device] = outcome.fences
        return Applied(book: book.with(devices: devices), fence: outcome.fence, previous: outcome.previous, warnings: outcome.warnings)
    }

    /// What this change makes of the device's own fences, `existing` (nil when the file
    /// does not name the device), validated as `apply(to:limits:)` validates; the rest
    /// of the book is not touched, so a change costs the same however large the book.
    public func apply(toFencesOf existing: [Fence]?, limits: FenceLimits) throws(FenceChangeError) -> Outcome {
        switch self {
        case .add(let device, let json):
            try Self.check(device: device)
            let existing = existing ?? []
            let (fences, warnings) = try Self.decode([json], device: device, numbered: false, limits: limits)
            let fence = fences[0]
            if existing.contains(where: { $0.identifier == fence.identifier }) {
                throw FenceChangeError(
                    .duplicateIdentifier,
                    "device \"\(device)\" already has a fence \"\(fence.identifier)\"; identifiers must be unique per device")
            }
            try Self.check(count: existing.count + 1, device: device, limits: limits)
            return Outcome(fences: existing + [fence], fence: fence, previous: nil, warnings: warnings)

        case .edit(let device, let identifier, let fields):
            let (existing, index) = try Self.locate(identifier, device: device, in: existing)
            let previous = existing[index]
            var object = FenceCodec.encode(previous).objectValue ?? JSONObject()
            object.members.removeAll { member in fields.keys.contains(member.key) }
            object.members += fields.members.filter { $0.value != .null }
            let (fences, warnings) = try Self.decode([.object(object)], device: device, numbered: false, limits: limits)
            var fence = fences[0]
            if fence.identifier == identifier {
                fence = fence.with(addedRevision: previous.addedRevision)
            } else if existing.contains(where: { $0.identifier == fence.identifier }) {
                throw FenceChangeError(
                    .duplicateIdentifier,
                    "cannot rename \"\(identifier)\" to \"\(fence.identifier)\": device \"\(device)\" already has a fence \"\(fence.identifier)\"; identifiers must be unique per device")
            }
            var edited = existing
            edited[index] = fence
            return Outcome(fences: edited, fence: fence, previous: previous, warnings: warnings)

        case .delete(let device, let identifier):
            let (existing, index) = try Self.locate(identifier, device: device, in: existing)
            var remaining = existing
            let previous = remaining.remove(at: index)
            return Outcome(fences: remaining, fence: nil, previous: previous, warnings: [])

        case .append(let device, let jsons):
            try Self.check(device: device)
            let existing = existing ?? []
            let (fences, warnings) = try Self.decode(jsons, device: device, numbered: true, limits: limits)
            try Self.checkUnique(fences, device: device)
            let existingIdentifiers = Set(existing.map(\.identifier))
            let clashes = fences.map(\.identifier).filter(existingIdentifiers.contains)
            if !clashes.isEmpty {
                let named = clashes.map { "\"\($0)\"" }.joined(separator: ", ")
                throw FenceChangeError(
                    .duplicateIdentifier,
                    "device \"\(device)\" already has \(clashes.count == 1 ? "a fence" : "fences") \(named); identifiers must be unique per device")
            }
            try Self.check(count: existing.count + fences.count, device: device, limits: limits)
            return Outcome(fences: existing + fences, fence: nil, previous: nil, warnings: warnings)

        case .replaceAll(let device, let jsons):
            try Self.check(device: device)
            let (fences, warnings) = try Self.decode(jsons, device: device, numbered: true, limits: limits)
            try Self.checkUnique(fences, device: device)
            try Self.check(count: fences.count, device: device, limits: limits)
            return Outcome(fences: fences, fence: nil, previous: nil, warnings: warnings)
        }
    }

    /// Decodes every fence, collecting every problem of every fence before refusing
    /// with the code of the first (a missing field, a wrong type, a value out of range,
    /// ...). Fences of a list are named by identifier, or by position ("#2") without one.
    private static func decode(
        _ jsons: [JSON], device: String, numbered: Bool, limits: FenceLimits
    ) throws(FenceChangeError) -> (fences: [Fence], warnings: [FenceProblem]) {
        var fences: [Fence] = []
        var errors: [FenceProblem] = []
        var firstCode: ErrorCode?
        var warnings: [FenceProblem] = []
        for (position, json) in jsons.enumerated() {
            let decoded = FenceCodec.decode(json, limits: limits)
            let name = decoded.identifier ?? (numbered ? "#\(position + 1)" : nil)
            firstCode = firstCode ?? decoded.issues.first?.code
            errors += decoded.errors.map { FenceProblem(device: device, fence: name, reason: $0) }
            warnings += decoded.warnings.map { FenceProblem(device: device, fence: name, reason: $0) }
            if let fence = decoded.fence { fences.append(fence) }
        }
        guard errors.isEmpty else { throw FenceChangeError.invalid(firstCode ?? .invalidValue, "", errors) }
        return (fences, warnings)
    }

    /// The fences of `device` and the position of `identifier` among them.
    private static func locate(_ identifier: String, device: String, in existing: [Fence]?) throws(FenceChangeError) -> ([Fence], Int) {
        guard let existing else { throw FenceChangeError.unknownDevice(device) }
        guard let index = existing.firstIndex(where: { $0.identifier == identifier }) else {
            throw FenceChangeError.unknownFence(identifier, device: device, existing: existing)
        }
        return (existing, index)
    }

    /// Refuses a device identifier that cannot be a topic level path.
    private static func check(device: String) throws(FenceChangeError) {
        if let problem = Identifier.problem(device: device) { throw FenceChangeError(.invalidDevice, problem) }
    }

    /// Refuses a list longer than `maximumFencesPerDevice`.
    private static func check(count: Int, device: String, limits: FenceLimits) throws(FenceChangeError) {
        guard count <= limits.maximumFencesPerDevice else {
            throw FenceChangeError(
                .fenceLimit,
                "device \"\(device)\" would have \(count) fences, but a device may have at most \(limits.maximumFencesPerDevice) (maximumFencesPerDevice)")
        }
    }

    /// Refuses a list that uses an identifier more than once, naming each repeated one.
    private static func checkUnique(_ fences: [Fence], device: String) throws(FenceChangeError) {
        var seen: Set<String> = []
        var repeated: [String] = []
        for fence in fences where !seen.insert(fence.identifier).inserted && !repeated.contains(fence.identifier) {
            repeated.append(fence.identifier)
        }
        guard repeated.isEmpty else {
            throw FenceChangeError(
                .duplicateIdentifier,
                "the fences for device \"\(device)\" use \(repeated.map { "\"\($0)\"" }.joined(separator: ", ")) more than once; identifiers must be unique per device")
        }
    }
}
