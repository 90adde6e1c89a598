/// A set of fences that apply to many devices: to every device (`owner` "shared"), or
/// to the devices of a named group (`owner` the group's name). The occupancy of each
/// of its fences, how many devices are inside, is what Home Assistant's zone state shows.
///
/// Shared sets may be large (city-wide points of interest, delivery zones), so each has
/// a spatial index, and devices keep state only for the few fences they are inside:
/// a fix costs the index lookup and the exact checks of its candidates. A set is an
/// immutable reference shared by every device and lane.
public final class SharedFences: Sendable, Equatable {
    /// "shared" for fences of every device, or the group's name.
    public let owner: String
    /// The fences, in file order.
    public let fences: [Fence]
    /// The fences laid out for evaluating fixes, with their spatial index.
    package let spatial: SpatialFences
    /// Whether any of the fences has a dwell time of its own.
    public let anyDwell: Bool
    /// The widest accuracy threshold of the fences' own (`FenceRules.ownAccuracyLimit`),
    /// nil when none sets one.
    package let widestOwnAccuracyLimit: Double?
    /// Whether no two fences share an identifier (the fence file refuses that), so a
    /// fence found by its identifier among the slots is the one `fence(_:)` names.
    package let identifiersAreUnique: Bool
    private let positions: [String: Int]

    public init(owner: String, fences: [Fence]) {
        self.owner = owner
        self.fences = fences
        spatial = SpatialFences(fences)
        anyDwell = fences.contains { $0.rules.dwell != nil }
        widestOwnAccuracyLimit = fences.compactMap(\.rules.ownAccuracyLimit).max()
        positions = Dictionary(fences.enumerated().map { ($0.element.identifier, $0.offset) }, uniquingKeysWith: { first, _ in first })
        identifiersAreUnique = positions.count == fences.count
    }

    /// The owner of the fences that apply to every device.
    public static let everyDevice = "shared"

    /// The fence `identifier`, if the set has it.
    @inlinable
    public func fence(_ identifier: String) -> Fence? {
        position(of: identifier).map { fences[$0] }
    }

    /// Where the fence `identifier` is in `fences`.
    public func position(of identifier: String) -> Int? {
        positions[identifier]
    }

    /// The same set with other fences (revised), keeping the owner.
    public func with(_ fences: [Fence]) -> SharedFences {
        SharedFences(owner: owner, fences: fences)
    }

    public static func == (lhs: SharedFences, rhs: SharedFences) -> Bool {
        lhs === rhs || (lhs.owner == rhs.owner && lhs.fences == rhs.fences)
    }
}
