/// A geofence: the app's geotification, with the identifier it is keyed by, the note
/// its notification carries, which transitions notify, and its own overrides of the
/// transition rules; optionally a display name, whether it is the device's home, and
/// the OwnTracks region ID it was imported with.
///
/// A fence is an immutable reference: the evaluator passes the same fence through
/// every check of a fix without copying it, and a book shares it between devices and
/// lanes. Two fences are equal when their contents are.
public final class Fence: Sendable, Hashable {
    /// Unique among the fences that apply to one device.
    public let identifier: String
    public let region: Region
    /// The text of the notification, as in the app.
    public let note: String
    public let eventType: EventType
    /// This fence's overrides of the global `TransitionRules`.
    public var rules: FenceRules { details?.rules ?? FenceRules() }
    /// The name people see (Home Assistant, the OwnTracks apps), when it is not the
    /// identifier: `Supermarket` for the fence `supermarket`. Equal to a Home Assistant
    /// zone's name, it makes the device tracker's state that zone.
    public var name: String? { details?.name }
    /// Whether being inside makes the device `home`, given explicitly; nil means the
    /// fence is home when its identifier is `home` (see `isHome`). The fence file
    /// refuses false for the fence `home`.
    public var home: Bool? { details?.home }
    /// The OwnTracks region ID (`rid`) of the waypoint the fence was imported from, kept
    /// so exports and transitions carry the ID the apps know the region by.
    public var regionID: String? { details?.regionID }
    /// The fence book revision in which this identifier first appeared for its scope
    /// (its device or shared set). A device whose state is older than that has not seen
    /// the fence yet, so its next fix establishes its relation to it without a
    /// notification. Kept across edits of the same identifier; set by `FenceBook`.
    public let addedRevision: Int

    /// The bounding box of `region`, computed once.
    public let boundingBox: BoundingBox
    /// The region's characteristic radius in metres, computed once.
    public let size: Double
    /// Whether `rules` overrides anything.
    public var overridesRules: Bool { details?.overridesRules ?? false }

    /// What most fences leave out (rule overrides, a name, `home`, a region ID), boxed
    /// apart so that a fence without them does not carry their hundred bytes: a plain
    /// circle takes 248 B in memory instead of 344 B (geotify-bench memory). Nil when
    /// all are left out.
    private final class Details: Sendable {
        let rules: FenceRules
        let name: String?
        let home: Bool?
        let regionID: String?
        /// Whether `rules` overrides anything, computed once.
        let overridesRules: Bool

        init(rules: FenceRules, name: String?, home: Bool?, regionID: String?) {
            self.rules = rules
            overridesRules = !rules.isEmpty
            self.name = name
            self.home = home
            self.regionID = regionID
        }
    }

    private let details: Details?

    public init(
        identifier: String, region: Region, note: String, eventType: EventType,
        rules: FenceRules = FenceRules(), name: String? = nil, home: Bool? = nil, regionID: String? = nil,
        addedRevision: Int = 0
    ) {
        self.identifier = identifier
        self.region = region
        self.note = note
        self.eventType = eventType
        details = rules.isEmpty && name == nil && home == nil && regionID == nil
            ? nil : Details(rules: rules, name: name, home: home, regionID: regionID)
        self.addedRevision = addedRevision
        boundingBox = region.boundingBox
        size = region.size
    }

    /// A fence with the same definition as `other` and another `addedRevision`, sharing
    /// its details.
    private init(_ other: Fence, addedRevision: Int) {
        identifier = other.identifier
        region = other.region
        note = other.note
        eventType = other.eventType
        details = other.details
        self.addedRevision = addedRevision
        boundingBox = other.boundingBox
        size = other.size
    }

    /// The same fence with another `addedRevision`.
    public func with(addedRevision revision: Int) -> Fence {
        revision == addedRevision ? self : Fence(self, addedRevision: revision)
    }

    /// The identifier of the fence that is home unless a fence says otherwise (`home`).
    public static let homeIdentifier = "home"

    /// Whether being inside this fence is being home: `home` when given, else whether
    /// the identifier is `home`. Several fences may be home (the house, the garden).
    public var isHome: Bool { home ?? (identifier == Fence.homeIdentifier) }

    /// What to call the fence for people: its `name`, else its note when it has one,
    /// else its identifier.
    public var displayName: String {
        if let name { return name }
        return note.isEmpty ? identifier : note
    }

    /// Whether `point` lies in the fence; the bounding box rejects far points first.
    @inlinable
    public func contains(_ point: Coordinate) -> Bool {
        boundingBox.contains(point) && region.contains(point)
    }

    /// Whether `other` is the same fence but for `addedRevision` (which the file does
    /// not hold): what a write checks to tell a fence changed by someone else.
    public func hasSameDefinition(as other: Fence) -> Bool {
        self === other
            || (identifier == other.identifier && region == other.region && note == other.note
                && eventType == other.eventType && rules == other.rules && name == other.name && home == other.home
                && regionID == other.regionID)
    }

    public static func == (lhs: Fence, rhs: Fence) -> Bool {
        lhs === rhs
            || (lhs.identifier == rhs.identifier && lhs.region == rhs.region && lhs.note == rhs.note
                && lhs.eventType == rhs.eventType && lhs.rules == rhs.rules && lhs.name == rhs.name && lhs.home == rhs.home
                && lhs.regionID == rhs.regionID && lhs.addedRevision == rhs.addedRevision)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
        hasher.combine(region)
        hasher.combine(addedRevision)
    }
}
