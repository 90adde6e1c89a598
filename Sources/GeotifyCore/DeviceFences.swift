/// The fences one device is evaluated against: its own (at most a few dozen, checked
/// one by one through their boxes on a grid of their own) and the shared sets that
/// apply to it (found through their indexes). Identifiers are unique across them; the
/// fence file refuses clashes. A book builds each device's value once, so a fix costs
/// no setup.
public final class DeviceFences: Sendable {
    // The properties a fix reads come first, so that they share the object's first
    // cache line with its header (which the caller's retain reads anyway).
    /// What the evaluator reads of `own` for every fix, in one block (see `OwnFenceTable`).
    let table: OwnFenceTable
    public let shared: [SharedFences]
    /// The newest `addedRevision` of the own fences: a device evaluated at this revision
    /// or later has seen them all, so only those near a fix need a look.
    public let newestRevision: Int
    /// Whether any of the fences has a dwell time of its own, so dwell timers may run
    /// even when the global rules set none.
    public let anyDwell: Bool
    /// Whether no two of `own` have the same identifier (the fence file refuses clashes;
    /// a list handed to the evaluator may not), so the first found is the only one.
    let ownIdentifiersAreUnique: Bool
    public let own: [Fence]
    /// The identifiers of `own`, in order: found without touching the fences.
    public let identifiers: [String]
    /// The widest accuracy threshold any of the fences sets for itself
    /// (`FenceRules.ownAccuracyLimit`), nil when none does: read only for a fix the
    /// global threshold refuses.
    package let widestOwnAccuracyLimit: Double?

    public init(own: [Fence] = [], shared: [SharedFences] = []) {
        self.own = own
        self.shared = shared
        identifiers = own.map(\.identifier)
        ownIdentifiersAreUnique = Set(identifiers).count == identifiers.count
        table = OwnFenceTable(own)
        anyDwell = own.contains { $0.rules.dwell != nil } || shared.contains(where: \.anyDwell)
        newestRevision = own.map(\.addedRevision).max() ?? 0
        widestOwnAccuracyLimit = (own.compactMap(\.rules.ownAccuracyLimit) + shared.compactMap(\.widestOwnAccuracyLimit)).max()
    }

    /// Whether a fix of `accuracy` that the global threshold refuses may still decide
    /// one of these fences, whose own threshold is wider (each fence then applies its own,
    /// `Evaluator.observe`).
    package func someFenceTakes(accuracy: Double?) -> Bool {
        guard let accuracy, let widest = widestOwnAccuracyLimit else { return false }
        return accuracy <= widest
    }

    /// The fence `identifier`, own or shared.
    @inlinable
    public func fence(_ identifier: String) -> Fence? {
        if let index = identifiers.firstIndex(of: identifier) { return own[index] }
        for set in shared {
            if let fence = set.fence(identifier) { return fence }
        }
        return nil
    }

    /// The shared set a fence belongs to, nil for the device's own fences.
    public func owner(of identifier: String) -> SharedFences? {
        shared.first { $0.position(of: identifier) != nil }
    }
}
