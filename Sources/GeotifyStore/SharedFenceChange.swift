import GeotifyCore
import GeotifyJSON

/// A change to a shared set of the fence file: the fences shared with every device
/// (`owner` "shared") or with the devices of a group (`owner` the group's name). What
/// `geotify fences add/edit/rm/import --shared` and `--group NAME` make.
///
/// The operations are a `FenceChange`'s (add, edit, delete, append, replace), validated
/// alike, with the rules of a shared set: identifiers are unique within the set and
/// must not clash with the own fences of a device the set applies to; the set is not
/// limited by `maximumFencesPerDevice`; a group must already be defined in `groups`.
/// Applying is pure; `FenceFile.apply(_:creatingMissingFile:)` writes the result.
public struct SharedFenceChange: Sendable, Equatable {
    /// `SharedFences.everyDevice`, or the name of a group.
    public let owner: String
    /// The operation; its device is not used (the set is `owner`'s).
    public let change: FenceChange

    /// The change `change` made to the set of `owner` instead of to a device's fences.
    public init(owner: String, _ change: FenceChange) {
        self.owner = owner
        self.change = change
    }

    /// The book `book` becomes with this change, validated against `limits`; `applied.fence`
    /// and `previous` are as for a device's change. New fences keep `addedRevision` 0.
    public func apply(to book: FenceBook, limits: FenceLimits) throws(FenceChangeError) -> FenceChange.Applied {
        if owner != SharedFences.everyDevice, book.groups[owner] == nil {
            throw FenceChangeError.unknownGroup(owner, existing: Array(book.groups.keys))
        }
        let outcome = try change.apply(toFencesOf: book.shared[owner]?.fences ?? [], limits: limits, list: .shared(owner))
        try checkClashes(outcome.fences, in: book)
        var shared = book.shared
        shared[owner] = outcome.fences.isEmpty ? nil : SharedFences(owner: owner, fences: outcome.fences)
        let changed = FenceBook(devices: book.devices, groups: book.groups, shared: shared, revision: book.revision)
        return FenceChange.Applied(book: changed, fence: outcome.fence, previous: outcome.previous, warnings: outcome.warnings)
    }

    /// A shared set as messages name it: `the shared set` (every device's) or `the
    /// shared set of group "family"`.
    public static func subject(of owner: String) -> String {
        owner == SharedFences.everyDevice ? "the shared set" : "the shared set of group \"\(owner)\""
    }

    /// The devices the set applies to: every device of the file, or the group's members.
    private func devices(in book: FenceBook) -> [String] {
        owner == SharedFences.everyDevice ? book.devices.keys.sorted() : book.groups[owner] ?? []
    }

    /// Refuses a set with an identifier that a device it applies to has among its own
    /// fences, as loading the file would.
    private func checkClashes(_ fences: [Fence], in book: FenceBook) throws(FenceChangeError) {
        let identifiers = Set(fences.map(\.identifier))
        for device in devices(in: book) {
            for fence in book.fences(of: device) where identifiers.contains(fence.identifier) {
                throw FenceChangeError(
                    .duplicateIdentifier,
                    "device \"\(device)\" has a fence \"\(fence.identifier)\" of its own, and \(SharedFenceChange.subject(of: owner)) applies to it; identifiers must be unique per device")
            }
        }
    }
}
