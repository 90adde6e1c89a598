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
    /// When its dwell or minimum-duration timer is next due, if it has one, on the
    /// bridge's clock (`deviceClock`'s deadline moved by `clockOffset`).
    package var deadline: Double?
    /// How far the device's clock (its fixes' timestamps) was behind the bridge's when
    /// its last accepted fix arrived: that fix's arrival minus its timestamp (negative
    /// for a clock ahead; 0 until a fix arrives, as after a start). A device's timers
    /// run on its own clock, the bridge's moved by this (`deviceClock(at:)`): a phone
    /// that sends positions it queued while offline, or whose clock is off, has its
    /// minimum duration and dwell timed by its fixes, so a tick between two of its
    /// queued positions does not confirm a change the next one undoes.
    package var clockOffset = 0.0
    /// Whether it holds a place in `DeviceAdmission` (a device the fence file did not
    /// name when it was admitted, or when its state was loaded at a start): what gives
    /// the place back when it is forgotten, or when the file comes to name it.
    package var admitted = false
    /// The fix time and place of the position last published on its state document, for
    /// the tracker's throttle.
    package var published: Fix?
    /// The value of its tracker topic last published (`LaneCore.showTracker`): nil until
    /// one is, as after a start, so the first is always published.
    package var shownTracker: String?

    package init(state: DeviceState, lastSeen: Double, admitted: Bool = false) {
        self.state = state
        self.lastSeen = lastSeen
        self.admitted = admitted
        published = state.lastFix
    }

    /// The device's clock when the bridge's reads `now` (see `clockOffset`).
    package func deviceClock(at now: Double) -> Double {
        now - clockOffset
    }
}
