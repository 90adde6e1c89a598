/// A device entering or leaving a shared fence, for the occupancy count, which spans
/// every lane (each lane sees only its own devices).
package struct OccupancyChange: Sendable, Equatable {
    /// The shared set: "shared", or a group's name.
    package var owner: String
    package var fence: String
    package var device: String
    package var inside: Bool
    /// Whether the set no longer has the fence (a leaving only): the device is taken out
    /// of what is left of its count, and the count's retained topic is emptied when no
    /// device is left in it rather than say 0 (`Occupancy.apply`).
    package var fenceRemoved: Bool

    package init(owner: String, fence: String, device: String, inside: Bool, fenceRemoved: Bool = false) {
        self.owner = owner
        self.fence = fence
        self.device = device
        self.inside = inside
        self.fenceRemoved = fenceRemoved
    }
}
