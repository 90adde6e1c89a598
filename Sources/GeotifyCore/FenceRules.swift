/// A fence's own overrides of the global `TransitionRules`; a nil field means "as the
/// settings say".
public struct FenceRules: Sendable, Hashable {
    public var maximumAccuracy: Double?
    public var accuracyAware: Bool?
    public var hysteresis: Double?
    public var minimumDuration: Double?
    public var dwell: Double?
    public var initialTrigger: InitialTrigger?

    public init(
        maximumAccuracy: Double? = nil, accuracyAware: Bool? = nil, hysteresis: Double? = nil,
        minimumDuration: Double? = nil, dwell: Double? = nil, initialTrigger: InitialTrigger? = nil
    ) {
        self.maximumAccuracy = maximumAccuracy
        self.accuracyAware = accuracyAware
        self.hysteresis = hysteresis
        self.minimumDuration = minimumDuration
        self.dwell = dwell
        self.initialTrigger = initialTrigger
    }

    /// The worst accuracy (metres) a fence with these rules takes a fix of, when it sets
    /// a threshold of its own: infinity when it turns the check off (0), nil when it
    /// keeps the settings'.
    package var ownAccuracyLimit: Double? { maximumAccuracy.map { $0 > 0 ? $0 : .infinity } }

    /// Whether this fence overrides nothing.
    public var isEmpty: Bool { self == FenceRules() }

    /// The rules in force for the fence: these overrides over `defaults`.
    public func resolved(over defaults: TransitionRules) -> TransitionRules {
        TransitionRules(
            maximumAccuracy: maximumAccuracy ?? defaults.maximumAccuracy,
            accuracyAware: accuracyAware ?? defaults.accuracyAware,
            hysteresis: hysteresis ?? defaults.hysteresis,
            minimumDuration: minimumDuration ?? defaults.minimumDuration,
            dwell: dwell ?? defaults.dwell,
            initialTrigger: initialTrigger ?? defaults.initialTrigger)
    }
}
