/// What a device is known to be in relation to one fence it is inside.
///
/// Device state keeps these only for fences the device is inside; every other fence
/// the device has seen is outside. That keeps state small however many fences exist.
public struct FenceState: Sendable, Equatable {
    /// The fence's identifier.
    public var fence: String
    /// When the device entered (the timestamp of the fix that established it).
    public var since: Double

    public init(fence: String, since: Double) {
        self.fence = fence
        self.since = since
    }
}
