/// Everything Geotify remembers about one device between fixes; persisted so that a
/// restart neither repeats an entry nor resets a badge.
public struct DeviceState: Sendable, Equatable {
    /// The number of notifications since the last reset, as the app's badge.
    public var badge: Int
    /// The last accepted fix (also when too inaccurate to decide transitions).
    public var lastFix: Fix?
    /// The fence book revision this device was last evaluated against; `nil` before its
    /// first fix. Fences added after it are new to the device.
    public var revision: Int?
    /// The fences the device is inside or about to change for, sorted by identifier.
    public var fences: [FenceState]

    public init(badge: Int = 0, lastFix: Fix? = nil, revision: Int? = nil, fences: [FenceState] = []) {
        self.badge = badge
        self.lastFix = lastFix
        self.revision = revision
        self.fences = fences
    }

    /// Whether the device is inside the fence `identifier` (as published).
    public func isInside(_ identifier: String) -> Bool {
        fences.contains { $0.fence == identifier && $0.inside }
    }

    /// Whether the device had seen `fence` when it was last evaluated, so that a change
    /// of relation to it is a transition rather than its first observation.
    @inlinable
    public func hasSeen(_ fence: Fence) -> Bool {
        hasSeen(addedRevision: fence.addedRevision)
    }

    /// Whether the device had seen a fence added in book revision `addedRevision`.
    @inlinable
    public func hasSeen(addedRevision: Int) -> Bool {
        guard let revision else { return false }
        return addedRevision <= revision
    }
}
