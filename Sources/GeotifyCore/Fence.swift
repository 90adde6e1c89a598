/// A geofence of one device: the app's geotification, with the identifier the device's
/// fences are keyed by, the note its notification carries, and which crossings notify.
public struct Fence: Sendable, Hashable {
    /// Unique among the fences of one device.
    public var identifier: String
    public let region: Region
    /// The text of the notification, as in the app.
    public var note: String
    public var eventType: EventType
    /// The fence book revision in which this identifier first appeared for its device.
    /// A device whose state is older than that has not seen the fence yet, so its next
    /// fix establishes its relation to it without a notification. Kept across edits of
    /// the same identifier; set by `FenceBook`.
    public var addedRevision: Int

    /// The bounding box of `region`, computed once.
    public let boundingBox: BoundingBox

    public init(identifier: String, region: Region, note: String, eventType: EventType, addedRevision: Int = 0) {
        self.identifier = identifier
        self.region = region
        self.note = note
        self.eventType = eventType
        self.addedRevision = addedRevision
        self.boundingBox = region.boundingBox
    }

    /// Whether `point` lies in the fence; the bounding box rejects far points first.
    @inlinable
    public func contains(_ point: Coordinate) -> Bool {
        boundingBox.contains(point) && region.contains(point)
    }
}
