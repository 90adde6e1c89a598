/// The rules that keep transitions trustworthy, as settings: global defaults in the
/// settings file, each overridable per fence (`FenceRules`).
///
/// - `maximumAccuracy`: a fix whose accuracy radius is larger (worse) than this many
///   metres is not used for transitions, though it still counts as the device's last
///   fix. 0 turns the check off. A fix without an accuracy counts as accurate
///   (OwnTracks leaves out zero values).
/// - `accuracyAware`: decide with the fix's accuracy circle, not just its centre (see
///   `Containment`). Off means a fix is inside exactly when its centre is.
/// - `hysteresis`: how far, in metres, beyond the edge a device must be before it exits;
///   nil means max(10 m, 10 % of the fence's radius).
/// - `minimumDuration`: seconds a new relation must hold before its transition is
///   published; a quick in-and-out shorter than this publishes nothing. 0 is off.
/// - `dwell`: seconds inside after which a `dwell` transition fires once per stay (the
///   Android "loitering delay"); nil is off.
/// - `initialTrigger`: see `InitialTrigger`.
public struct TransitionRules: Sendable, Hashable {
    public var maximumAccuracy: Double
    public var accuracyAware: Bool
    public var hysteresis: Double?
    public var minimumDuration: Double
    public var dwell: Double?
    public var initialTrigger: InitialTrigger

    public init(
        maximumAccuracy: Double = 500, accuracyAware: Bool = true, hysteresis: Double? = nil,
        minimumDuration: Double = 0, dwell: Double? = nil, initialTrigger: InitialTrigger = .none
    ) {
        self.maximumAccuracy = maximumAccuracy
        self.accuracyAware = accuracyAware
        self.hysteresis = hysteresis
        self.minimumDuration = minimumDuration
        self.dwell = dwell
        self.initialTrigger = initialTrigger
    }

    /// Every rule off: a fix is inside exactly when its centre is, every crossing is a
    /// transition at once. What naive geofencing does, kept for comparison and replay.
    public static let none = TransitionRules(
        maximumAccuracy: 0, accuracyAware: false, hysteresis: 0, minimumDuration: 0, dwell: nil, initialTrigger: .none)

    /// Whether a fix with `accuracy` may decide transitions.
    @inlinable
    public func accepts(accuracy: Double?) -> Bool {
        guard maximumAccuracy > 0, let accuracy else { return true }
        return accuracy <= maximumAccuracy
    }

    /// The exit margin for a fence of characteristic radius `size`.
    @inlinable
    public func hysteresis(forSize size: Double) -> Double {
        hysteresis ?? max(10, 0.1 * size)
    }
}
