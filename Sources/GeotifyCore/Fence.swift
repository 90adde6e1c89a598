/// A geofence of one device: the app's geotification, with the identifier the device's
/// fences are keyed by, the note its notification carries, which transitions notify,
/// and the fence's own overrides of the transition rules.
public struct Fence: Sendable, Hashable {
    /// Unique among the fences of one device.
    public var identifier: String
    public let region: Region
    /// The text of the notification, as in the app.
    public var note: String
    public var eventType: EventType
    /// This fence's overrides of the global `TransitionRules`.
    public var rules: FenceRules
    /// The fence book revision in which this identifier first appeared for its device.
    /// A device whose state is older than that has not seen the fence yet, so its next
    /// fix establishes its relation to it without a notification. Kept across edits of
    /// the same identifier; set by `FenceBook`.
    public var addedRevision: Int

    /// The bounding box of `region`, computed once.
    public let boundingBox: BoundingBox
    /// The region's characteristic radius in metres, computed once.
    public let size: Double

    public init(
        identifier: String, region: Region, note: String, eventType: EventType,
        rules: FenceRules = FenceRules(), addedRevision: Int = 0
    ) {
        self.identifier = identifier
        self.region = region
        self.note = note
        self.eventType = eventType
        self.rules = rules
        self.addedRevision = addedRevision
        boundingBox = region.boundingBox
        size = region.size
    }

    /// Whether `point` lies in the fence; the bounding box rejects far points first.
    @inlinable
    public func contains(_ point: Coordinate) -> Bool {
        boundingBox.contains(point) && region.contains(point)
    }
}
