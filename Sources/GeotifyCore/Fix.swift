/// One position report of one device: where it was, how sure it was, and when.
public struct Fix: Sendable, Equatable {
    /// The device that reported it (`user/device` for OwnTracks).
    public var device: String
    public var coordinate: Coordinate
    /// The radius of uncertainty in metres, when the device reported one.
    public var accuracy: Double?
    /// When the position was taken, in seconds since 1970 (the report's own time, or
    /// the arrival time when it carried none).
    public var timestamp: Double

    public init(device: String, coordinate: Coordinate, accuracy: Double? = nil, timestamp: Double) {
        self.device = device
        self.coordinate = coordinate
        self.accuracy = accuracy
        self.timestamp = timestamp
    }
}
