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
    /// A change that would create a device named `shared` or as a group is refused
    /// (`reservedDevice`).
    public func apply(to book: FenceBook, limits: FenceLimits) throws(FenceChangeError) -> Applied {
        let outcome = try apply(toFencesOf: book.devices[device], in: book, limits: limits)
        var devices = book.devices
        devices[device] = outcome.fences
        return Applied(book: book.with(devices: devices), fence: outcome.fence, previous: outcome.previous, warnings: outcome.warnings)
    }

    /// What this change makes of the device's own fences, `existing` (as `book` has them,
    /// or as earlier changes in the same write left them; nil when there are none),
    /// validated as `apply(to:limits:)` validates, refused when it would create a device
    /// named as a shared set of `book`, or give the device a fence whose identifier a
    /// shared fence of it has (`duplicateIdentifier`: the file would no longer load).
    /// The rest of the book is not touched, so a change costs the same however large
    /// the book: callers that change many devices apply each to its list and make the
    /// book once. Every writer (the command line, an MQTT preview, the bridge's writes)
    /// comes through here, so all refuse alike.
    public func apply(toFencesOf existing: [Fence]?, in book: FenceBook, limits: FenceLimits) throws(FenceChangeError) -> Outcome {
        try checkReservedName(in: book)
        let outcome = try apply(toFencesOf: existing, limits: limits, list: .device(device))
        try checkShared(outcome, in: book)
        return outcome
    }

    /// Refuses an outcome that gives the device an own fence with the identifier of a
    /// fence shared with it (with every device, or with a group it is in): identifiers
    /// are unique across what a device is evaluated against, so such a file does not load.
    private func checkShared(_ outcome: Outcome, in book: FenceBook) throws(FenceChangeError) {
        let shared = book.deviceFences(of: device).shared
        guard !shared.isEmpty else { return }
        for fence in outcome.fences {
            guard let set = shared.first(where: { $0.position(of: fence.identifier) != nil }) else { continue }
            let owner = set.owner == SharedFences.everyDevice ? "every device" : "the group \"\(set.owner)\""
            throw FenceChangeError(
                .duplicateIdentifier,
                "device \"\(device)\" already has a fence \"\(fence.identifier)\", shared with \(owner); identifiers must be unique per device")
        }
    }

    /// Refuses a change that would create a device named as a shared set of `book`
    /// (`shared`, or a group's name): fences meant to be shared would become one
    /// device's. A device the file already lists under such a name may still be changed.
    private func checkReservedName(in book: FenceBook) throws(FenceChangeError) {
        switch self {
        case .add, .append, .replaceAll: break
        case .edit, .delete: return
        }
        guard book.devices[device] == nil else { return }
        if device == SharedFences.everyDevice {
            throw FenceChangeError(
                .reservedDevice,
                "\"\(device)\" is not a device: it names the fences shared with every device, so no device of that name is created")
        }
        if book.groups[device] != nil {
            throw FenceChangeError(
                .reservedDevice,
                "\"\(device)\" is not a device: it is a group of the fence file, so no device of that name is created")
        }
    }

    /// Whose list a change is applied to, as its messages name it.
    enum List {
        /// A device's own fences: at most `maximumFencesPerDevice`.
        case device(String)
        /// A shared set (`SharedFences.everyDevice` or a group's name): not limited.
        case shared(String)

        /// The list as a message's subject: `device "alice/phone"`, `the shared set`.
        var subject: String {
            switch self {
            case .device(let device): "device \"\(device)\""
            case .shared(let owner): SharedFenceChange.subject(of: owner)
            }
        }

        /// What identifiers are unique in: "device", "shared set".
        var unit: String {
            switch self {
            case .device: "device"
            case .shared: "shared set"
            }
        }

        /// The device a problem names; nil for a shared set (as loading the file names it).
        var device: String? {
            switch self {
            case .device(let device): device
            case .shared: nil
            }
        }
    }

    /// What this change makes of `existing`, the fences of `list` (nil: a device the file
    /// does not name); the change's own device is not used.
    func apply(toFencesOf existing: [Fence]?, limits: FenceLimits, list: List) throws(FenceChangeError) -> Outcome {
        let subject = list.subject
        let unit = list.unit
        switch self {
        case .add(_, let json):
            try Self.check(list)
            let existing = existing ?? []
            let (fences, warnings) = try Self.decode([json], device: list.device, numbered: false, limits: limits)
            let fence = fences[0]
            if existing.contains(where: { $0.identifier == fence.identifier }) {
                throw FenceChangeError(
                    .duplicateIdentifier,
                    "\(subject) already has a fence \"\(fence.identifier)\"; identifiers must be unique per \(unit)")
            }
            try Self.check(count: existing.count + 1, list: list, limits: limits)
            return Outcome(fences: existing + [fence], fence: fence, previous: nil, warnings: warnings)

        case .edit(_, let identifier, let fields):
            let (existing, index) = try Self.locate(identifier, list: list, in: existing)
            let previous = existing[index]
            var object = FenceCodec.encode(previous).objectValue ?? JSONObject()
            object.members.removeAll { member in fields.keys.contains(member.key) }
            object.members += fields.members.filter { $0.value != .null }
            let (fences, warnings) = try Self.decode([.object(object)], device: list.device, numbered: false, limits: limits)
            var fence = fences[0]
            if fence.identifier == identifier {
                fence = fence.with(addedRevision: previous.addedRevision)
            } else if existing.contains(where: { $0.identifier == fence.identifier }) {
                throw FenceChangeError(
                    .duplicateIdentifier,
                    "cannot rename \"\(identifier)\" to \"\(fence.identifier)\": \(subject) already has a fence \"\(fence.identifier)\"; identifiers must be unique per \(unit)")
            }
            var edited = existing
            edited[index] = fence
            return Outcome(fences: edited, fence: fence, previous: previous, warnings: warnings)

        case .delete(_, let identifier):
            let (existing, index) = try Self.locate(identifier, list: list, in: existing)
            var remaining = existing
            let previous = remaining.remove(at: index)
            return Outcome(fences: remaining, fence: nil, previous: previous, warnings: [])

        case .append(_, let jsons):
            try Self.check(list)
            let existing = existing ?? []
            let (fences, warnings) = try Self.decode(jsons, device: list.device, numbered: true, limits: limits)
            try Self.checkUnique(fences, list: list)
            let existingIdentifiers = Set(existing.map(\.identifier))
            let clashes = fences.map(\.identifier).filter(existingIdentifiers.contains)
            if !clashes.isEmpty {
                let named = clashes.map { "\"\($0)\"" }.joined(separator: ", ")
                throw FenceChangeError(
                    .duplicateIdentifier,
                    "\(subject) already has \(clashes.count == 1 ? "a fence" : "fences") \(named); identifiers must be unique per \(unit)")
            }
            try Self.check(count: existing.count + fences.count, list: list, limits: limits)
            return Outcome(fences: existing + fences, fence: nil, previous: nil, warnings: warnings)

        case .replaceAll(_, let jsons):
            try Self.check(list)
            let (fences, warnings) = try Self.decode(jsons, device: list.device, numbered: true, limits: limits)
            try Self.checkUnique(fences, list: list)
            try Self.check(count: fences.count, list: list, limits: limits)
            return Outcome(fences: fences, fence: nil, previous: nil, warnings: warnings)
        }
    }

    /// Decodes every fence, collecting every problem of every fence before refusing
    /// with the code of the first (a missing field, a wrong type, a value out of range,
    /// ...). Fences of a list are named by identifier, or by position ("#2") without one.
    private static func decode(
        _ jsons: [JSON], device: String?, numbered: Bool, limits: FenceLimits
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

    /// The fences of `list` and the position of `identifier` among them.
    private static func locate(_ identifier: String, list: List, in existing: [Fence]?) throws(FenceChangeError) -> ([Fence], Int) {
        guard let existing else { throw FenceChangeError.unknownDevice(list.device ?? "") }
        guard let index = existing.firstIndex(where: { $0.identifier == identifier }) else {
            throw FenceChangeError.unknownFence(identifier, in: list.subject, existing: existing)
        }
        return (existing, index)
    }

    /// Refuses a device identifier that cannot be a topic level path.
    private static func check(_ list: List) throws(FenceChangeError) {
        guard let device = list.device else { return }
        if let problem = Identifier.problem(device: device) { throw FenceChangeError(.invalidDevice, problem) }
    }

    /// Refuses a device's list longer than `maximumFencesPerDevice`.
    private static func check(count: Int, list: List, limits: FenceLimits) throws(FenceChangeError) {
        guard let device = list.device, count > limits.maximumFencesPerDevice else { return }
        throw FenceChangeError(
            .fenceLimit,
            "device \"\(device)\" would have \(count) fences, but a device may have at most \(limits.maximumFencesPerDevice) (maximumFencesPerDevice)")
    }

    /// Refuses a list that uses an identifier more than once, naming each repeated one.
    private static func checkUnique(_ fences: [Fence], list: List) throws(FenceChangeError) {
        var seen: Set<String> = []
        var repeated: [String] = []
        for fence in fences where !seen.insert(fence.identifier).inserted && !repeated.contains(fence.identifier) {
            repeated.append(fence.identifier)
        }
        guard repeated.isEmpty else {
            throw FenceChangeError(
                .duplicateIdentifier,
                "the fences for \(list.subject) use \(repeated.map { "\"\($0)\"" }.joined(separator: ", ")) more than once; identifiers must be unique per \(list.unit)")
        }
    }
}
