/// All fences in force: each device's own list, the named groups of devices, and the
/// shared sets (for every device, or for a group), as validated from the fence file;
/// and a revision number that grows whenever an identifier appears that was not there.
///
/// A book is an immutable value shared by the evaluation lanes; a reload builds a new
/// one with `revised(from:)` so edited fences keep their place in each device's history.
public struct FenceBook: Sendable, Equatable {
    /// The fences of each device, in the order of the file.
    public private(set) var devices: [String: [Fence]]
    /// Which making of the book this is; renewed by every change (`FenceBookEdition`).
    package private(set) var edition = FenceBookEdition()
    /// The devices whose fences may differ from the books this one was made from by
    /// `replacing(devices:)` (`FenceBookLineage`); no part of the book's equality.
    package private(set) var lineage = FenceBookLineage()
    /// The members of each named group.
    public private(set) var groups: [String: [String]]
    /// The shared sets by owner: `SharedFences.everyDevice`, or a group's name.
    public private(set) var shared: [String: SharedFences]
    /// The newest `addedRevision` of any fence; device states evaluated at this revision
    /// have seen every fence.
    public private(set) var revision: Int
    /// The groups each device is in.
    private var memberships: [String: [String]]
    /// What each device in the file is evaluated against, built once.
    private var evaluated: [String: DeviceFences]
    /// What a device the file does not name is evaluated against.
    private var stranger: DeviceFences
    /// The devices the file names, by their lowercased identifier.
    private var lowercased: [String: String]

    /// A book of `devices`, `groups` and `shared` sets whose fences carry the revisions
    /// they were given.
    public init(
        devices: [String: [Fence]] = [:], groups: [String: [String]] = [:], shared: [String: SharedFences] = [:],
        revision: Int = 0
    ) {
        self.devices = devices
        self.groups = groups
        self.shared = shared
        var memberships: [String: [String]] = [:]
        for (group, members) in groups.sorted(by: { $0.key < $1.key }) {
            for member in members { memberships[member, default: []].append(group) }
        }
        self.memberships = memberships
        var evaluated: [String: DeviceFences] = [:]
        let everyone = shared[SharedFences.everyDevice].map { [$0] } ?? []
        for device in Set(devices.keys).union(memberships.keys) {
            let groupSets = (memberships[device] ?? []).compactMap { shared[$0] }
            evaluated[device] = DeviceFences(own: devices[device] ?? [], shared: everyone + groupSets)
        }
        self.evaluated = evaluated
        lowercased = Dictionary(evaluated.keys.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        stranger = DeviceFences(shared: everyone)
        let newest = (devices.values.joined().map(\.addedRevision) + shared.values.flatMap { $0.fences.map(\.addedRevision) }).max() ?? 0
        self.revision = max(revision, newest)
    }

    /// This book with the devices' own fences replaced by `devices`, groups and shared
    /// sets kept (what a change to one device's fences makes).
    public func with(devices: [String: [Fence]]) -> FenceBook {
        FenceBook(devices: devices, groups: groups, shared: shared, revision: revision)
    }

    /// This book with the own fences of the devices in `changes` replaced, the rest
    /// untouched: revisions as `revised(from:)` gives them (an identifier the device had
    /// keeps its revision, a new one gets the next), at the cost of the changed devices
    /// only, however large the book.
    public func replacing(devices changes: [String: [Fence]]) -> FenceBook {
        var book = self
        book.edition = FenceBookEdition()
        book.lineage = lineage.extended(from: edition, changed: Set(changes.keys))
        var anyNew = false
        for (device, fences) in changes {
            let view = view(of: device, replacedBy: fences)
            anyNew = anyNew || view.revision > revision
            book.devices[device] = view.fences
            book.evaluated[device] = view.evaluated
            book.lowercased[device.lowercased()] = device
        }
        if anyNew { book.revision = revision + 1 }
        return book
    }

    /// What `replacing(devices: [device: fences])` would make of `device` alone: its
    /// fences with their revisions, what it would be evaluated against, and the book's
    /// revision, at the cost of that device's fences, without copying the book's tables
    /// (which a change of this book, shared with the lanes, would). For a preview, which
    /// changes nothing.
    package func view(of device: String, replacedBy fences: [Fence]) -> (fences: [Fence], evaluated: DeviceFences, revision: Int) {
        let known = Dictionary(self.fences(of: device).map { ($0.identifier, $0.addedRevision) }, uniquingKeysWith: { first, _ in first })
        var anyNew = false
        let revised = fences.map { fence in
            if let revision = known[fence.identifier] { return fence.with(addedRevision: revision) }
            anyNew = true
            return fence.with(addedRevision: revision + 1)
        }
        let everyone = shared[SharedFences.everyDevice].map { [$0] } ?? []
        let groupSets = (memberships[device] ?? []).compactMap { shared[$0] }
        return (revised, DeviceFences(own: revised, shared: everyone + groupSets), anyNew ? revision + 1 : revision)
    }

    /// A device the file names whose identifier equals `device` but for letter case, nil
    /// when there is none (or `device` itself is named).
    public func device(matchingIgnoringCase device: String) -> String? {
        guard !knows(device), let named = lowercased[device.lowercased()] else { return nil }
        return named
    }

    /// The own fences of `device`, empty when it has none.
    public func fences(of device: String) -> [Fence] {
        devices[device] ?? []
    }

    /// Everything `device` is evaluated against: its own fences and the shared sets that
    /// apply to it.
    public func deviceFences(of device: String) -> DeviceFences {
        evaluated[device] ?? stranger
    }

    /// Whether the file names `device`, in `devices` or in a group.
    public func knows(_ device: String) -> Bool {
        devices[device] != nil || memberships[device] != nil
    }

    /// The number of fences, own and shared.
    public var fenceCount: Int {
        devices.values.reduce(0) { $0 + $1.count } + shared.values.reduce(0) { $0 + $1.fences.count }
    }

    /// The scope a shared set's revisions are kept under: not a device identifier,
    /// since those cannot contain '#'.
    public static func scope(ofShared owner: String) -> String { "#\(owner)" }

    /// This book's fences with revisions carried over from `previous`: an identifier the
    /// device (or shared set) already had keeps its `addedRevision`; a new one gets the
    /// next revision. The result inherits from `previous` as far as it can
    /// (`inheriting(from:)`).
    public func revised(from previous: FenceBook) -> FenceBook {
        revised(knownRevisions: previous.knownRevisions, currentRevision: previous.revision).inheriting(from: previous)
    }

    /// This book (the file read again, its revisions carried over from `previous`) as a
    /// descendant of `previous` when their groups and shared sets are equal: the devices
    /// whose own fences differ, if no more than `FenceBookLineage.maximumChanged`, become
    /// a step of `previous`'s lineage, and every other device keeps the very objects
    /// `previous` evaluated it against, as `replacing(devices:)` keeps them. Otherwise
    /// (a group or a shared set changed: any device may be evaluated differently) the book
    /// as it is, with no forebear.
    ///
    /// Why: an edit of the file, or of one device's file in a fence directory, changes a
    /// few devices' fences, but a book read again had no forebear, and each lane then
    /// looked at every device it keeps (335 ms for a lane of 100 000 devices, every
    /// position in it waiting). Comparing the books costs the reader, once, what reading
    /// the file already cost it, and no lane.
    package func inheriting(from previous: FenceBook) -> FenceBook {
        guard groups == previous.groups, shared == previous.shared else { return self }
        var changed = Set<String>()
        for (device, fences) in devices where previous.devices[device] != fences {
            changed.insert(device)
            guard changed.count <= FenceBookLineage.maximumChanged else { return self }
        }
        for device in previous.devices.keys where devices[device] == nil {
            changed.insert(device)
            guard changed.count <= FenceBookLineage.maximumChanged else { return self }
        }
        var book = self
        book.shared = previous.shared
        book.stranger = previous.stranger
        // `previous`'s table with the changed devices made again (against the shared sets
        // kept, so that those are the same objects for all) or gone.
        var kept = previous.evaluated
        let everyone = previous.shared[SharedFences.everyDevice].map { [$0] } ?? []
        for device in changed {
            kept[device] = evaluated[device] == nil ? nil : DeviceFences(
                own: devices[device] ?? [], shared: everyone + (memberships[device] ?? []).compactMap { previous.shared[$0] })
        }
        book.evaluated = kept
        book.lineage = previous.lineage.extended(from: previous.edition, changed: changed)
        return book
    }

    /// This book's fences with revisions taken from `knownRevisions` (scope → identifier
    /// → revision, as persisted; a scope is a device or `scope(ofShared:)`); identifiers
    /// not in it get `currentRevision + 1`.
    public func revised(knownRevisions: [String: [String: Int]], currentRevision: Int) -> FenceBook {
        var revisions = FenceRevisions(known: knownRevisions, current: currentRevision)
        var revisedDevices: [String: [Fence]] = [:]
        for (device, fences) in devices { revisedDevices[device] = revisions.revise(fences, scope: device) }
        var revisedShared: [String: SharedFences] = [:]
        for (owner, set) in shared {
            let fences = revisions.revise(set.fences, scope: FenceBook.scope(ofShared: owner))
            revisedShared[owner] = fences == set.fences ? set : set.with(fences)
        }
        return FenceBook(devices: revisedDevices, groups: groups, shared: revisedShared, revision: revisions.revision)
    }

    /// Scope → identifier → revision, the part of the book that must survive a restart.
    public var knownRevisions: [String: [String: Int]] {
        func table(_ fences: [Fence]) -> [String: Int] {
            Dictionary(fences.map { ($0.identifier, $0.addedRevision) }, uniquingKeysWith: { first, _ in first })
        }
        var known = devices.mapValues(table)
        for (owner, set) in shared { known[FenceBook.scope(ofShared: owner)] = table(set.fences) }
        return known
    }

    public static func == (lhs: FenceBook, rhs: FenceBook) -> Bool {
        lhs.devices == rhs.devices && lhs.groups == rhs.groups && lhs.shared == rhs.shared && lhs.revision == rhs.revision
    }
}
