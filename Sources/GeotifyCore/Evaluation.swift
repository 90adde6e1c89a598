/// The outcome of evaluating one fix (or advancing a device's clock): whether the fix
/// was used, every transition it caused, and the ones that notify, with their badge counts.
public struct Evaluation: Sendable, Equatable {
    /// What became of the fix.
    public enum Outcome: Sendable, Equatable {
        /// Evaluated against every fence (each deciding only if the fix is accurate enough
        /// by its own threshold, `FenceRules.maximumAccuracy`, or else the global one).
        case evaluated
        /// Accepted as the device's last fix, but too inaccurate to decide transitions:
        /// worse than the global threshold and than every fence's own.
        case inaccurate
        /// Not evaluated at all.
        case dropped(FixAcceptance.Drop)
        /// No fix: the device's clock was advanced to fire due dwell and debounce timers.
        case advanced

        /// Whether the fix was dropped (not evaluated, not the device's last fix).
        public var isDropped: Bool {
            if case .dropped = self { return true }
            return false
        }
    }

    public var outcome: Outcome
    /// All transitions, notifying or not, in the order they happened.
    public var transitions: [Transition]
    /// The transitions whose fence's `eventType` asks for them.
    public var notifications: [Notification]
    /// Fences the device was inside that no longer apply to it (removed from the file,
    /// or the device left their group): it is no longer counted in them, silently.
    public var forgotten: [String]
    /// Fences whose relation to the device became known with this fix (its first
    /// confident observation of them): silently, without a transition unless
    /// `initialTrigger` asked for one, but from now on its presence can be told.
    public var established: [String]
    /// Whether the evaluation wrote the device's fence entries (`DeviceState.fences`):
    /// entered, left, a change became pending or was dropped, an entry was added or
    /// forgotten. Always true when they changed; false means they are as they were. It
    /// may be true with no net change, as when an entry for a fence new at this revision
    /// is added and dropped again within the fix (the state's revision changes then
    /// anyway). A caller that persists states tells from it whether a restart needs the
    /// new entries, without keeping a copy of the old ones to compare, which would retain
    /// their storage, out of the cache for a device not seen lately, on every fix.
    public var changedFences = false

    public init(
        outcome: Outcome = .evaluated, transitions: [Transition] = [], notifications: [Notification] = [],
        forgotten: [String] = [], established: [String] = []
    ) {
        self.outcome = outcome
        self.transitions = transitions
        self.notifications = notifications
        self.forgotten = forgotten
        self.established = established
    }

    /// Whether the device's published relation to any fence changed or became known
    /// (what presence and occupancy follow); dwell transitions do not change it.
    public var changedPresence: Bool {
        !forgotten.isEmpty || !established.isEmpty || transitions.contains { $0.kind != .dwell }
    }
}
