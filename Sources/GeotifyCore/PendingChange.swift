/// A change of relation seen but not yet published: the device's `minimumDuration`
/// has not passed since the fix that first showed it.
public struct PendingChange: Sendable, Hashable {
    // Stored widest first, so the value is 34 bytes (40 with `inside` first); a
    // `FenceState` keeps it out of line.
    /// The fix that first showed it; the transition, once confirmed, carries its time
    /// and position.
    public var coordinate: Coordinate
    public var timestamp: Double
    public var accuracy: Double?
    /// The relation the device seems to have moved to.
    public var inside: Bool

    public init(inside: Bool, coordinate: Coordinate, accuracy: Double?, timestamp: Double) {
        self.inside = inside
        self.coordinate = coordinate
        self.accuracy = accuracy
        self.timestamp = timestamp
    }
}
