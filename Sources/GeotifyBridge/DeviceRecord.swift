import GeotifyCore

/// What a lane keeps about one device: its persisted state and what the shell around
/// the evaluator needs besides (its message format, when it was last heard from, what
/// is not yet saved, its next timer, what was last published of its position and its
/// tracker).
package struct DeviceRecord: Sendable, Equatable {
    package var state: DeviceState
    /// Whether its positions arrive as OwnTracks messages (so its notifications are also
    /// published as OwnTracks transitions).
    package var ownTracks = false
    /// When its last message arrived (the bridge's clock), for eviction.
    package var lastSeen: Double
    /// Whether the last fix differs from the saved one: saved with the next lazy flush,
    /// since a restart can do without it.
    package var unsavedFix = false
    /// When its dwell or minimum-duration timer is next due, if it has one.
    package var deadline: Double?
    /// The fix time and place of the position last published on its state document, for
    /// the tracker's throttle.
    package var published: Fix?
    /// The value of its tracker topic last published (`LaneCore.showTracker`): nil until
    /// one is, as after a start, so the first is always published.
    package var shownTracker: String?
    /// Whether it was said once that this unnamed device matches a named one but for
    /// letter case.
    package var warnedCase = false

    package init(state: DeviceState, lastSeen: Double) {
        self.state = state
        self.lastSeen = lastSeen
        published = state.lastFix
    }
}
