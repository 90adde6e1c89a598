/// All fences in force: each device's list, as validated from the fence file, and a
/// revision number that grows whenever an identifier appears that a device did not have.
///
/// A book is an immutable value shared by the evaluation lanes; a reload builds a new
/// one with `revised(from:)` so edited fences keep their place in each device's history.
public struct FenceBook: Sendable, Equatable {
    /// The fences of each device, in the order of the file.
    public private(set) var devices: [String: [Fence]]
    /// The newest `addedRevision` of any fence; device states evaluated at this revision
    /// have seen every fence.
    public private(set) var revision: Int

    /// A book of `devices` whose fences carry the revisions they were given.
    public init(devices: [String: [Fence]] = [:], revision: Int = 0) {
        self.devices = devices
        self.revision = max(revision, devices.values.joined().map(\.addedRevision).max() ?? 0)
    }

    /// The fences of `device`, empty when it has none.
    public func fences(of device: String) -> [Fence] {
        devices[device] ?? []
    }

    /// The number of fences over all devices.
    public var fenceCount: Int { devices.values.reduce(0) { $0 + $1.count } }

    /// This book's fences with revisions carried over from `previous`: an identifier the
    /// device already had keeps its `addedRevision`; a new one gets the next revision.
    public func revised(from previous: FenceBook) -> FenceBook {
        revised(knownRevisions: previous.devices.mapValues { fences in
            Dictionary(fences.map { ($0.identifier, $0.addedRevision) }, uniquingKeysWith: { first, _ in first })
        }, currentRevision: previous.revision)
    }

    /// This book's fences with revisions taken from `knownRevisions` (device → identifier
    /// → revision, as persisted); identifiers not in it get `currentRevision + 1`.
    public func revised(knownRevisions: [String: [String: Int]], currentRevision: Int) -> FenceBook {
        let next = currentRevision + 1
        var anyNew = false
        var revisedDevices: [String: [Fence]] = [:]
        for (device, fences) in devices {
            let known = knownRevisions[device] ?? [:]
            revisedDevices[device] = fences.map { fence in
                var fence = fence
                if let revision = known[fence.identifier] {
                    fence.addedRevision = revision
                } else {
                    fence.addedRevision = next
                    anyNew = true
                }
                return fence
            }
        }
        return FenceBook(devices: revisedDevices, revision: anyNew ? next : currentRevision)
    }

    /// Device → identifier → revision, the part of the book that must survive a restart.
    public var knownRevisions: [String: [String: Int]] {
        devices.mapValues { fences in
            Dictionary(fences.map { ($0.identifier, $0.addedRevision) }, uniquingKeysWith: { first, _ in first })
        }
    }
}
