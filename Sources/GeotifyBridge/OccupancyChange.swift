/// A device entering or leaving a shared fence, for the occupancy count, which spans
/// every lane (each lane sees only its own devices).
package struct OccupancyChange: Sendable, Equatable {
    /// The shared set: "shared", or a group's name.
    package var owner: String
    package var fence: String
    package var device: String
    package var inside: Bool

    package init(owner: String, fence: String, device: String, inside: Bool) {
        self.owner = owner
        self.fence = fence
        self.device = device
        self.inside = inside
    }
}
