/// One of the transition rules, described once: its name (the key in the settings file,
/// where it sets the default for every fence, and in the fence file, where one fence
/// overrides it), the values it takes, and what it does. The settings loader, the fence
/// codec and the help text all read `TransitionRules` and `FenceRules` through it, so
/// they cannot drift apart.
package enum TransitionRule: String, CaseIterable, Sendable {
    case maximumAccuracy
    case accuracyAware
    case hysteresis
    case minimumDuration
    case dwell
    case initialTrigger

    /// Where the rule lives in `TransitionRules` (the default) and in `FenceRules` (a
    /// fence's override, nil when it has none), by the type of its value.
    package enum Field {
        /// Metres or seconds, never negative.
        case number(WritableKeyPath<TransitionRules, Double>, WritableKeyPath<FenceRules, Double?>)
        /// Metres or seconds, never negative; nil in `TransitionRules` has a meaning of
        /// its own (automatic, off).
        case optionalNumber(WritableKeyPath<TransitionRules, Double?>, WritableKeyPath<FenceRules, Double?>)
        /// On or off.
        case flag(WritableKeyPath<TransitionRules, Bool>, WritableKeyPath<FenceRules, Bool?>)
        /// One of `InitialTrigger`'s names.
        case trigger(WritableKeyPath<TransitionRules, InitialTrigger>, WritableKeyPath<FenceRules, InitialTrigger?>)
    }

    /// The rule's place in both rule types.
    package var field: Field {
        switch self {
        case .maximumAccuracy: .number(\.maximumAccuracy, \.maximumAccuracy)
        case .accuracyAware: .flag(\.accuracyAware, \.accuracyAware)
        case .hysteresis: .optionalNumber(\.hysteresis, \.hysteresis)
        case .minimumDuration: .number(\.minimumDuration, \.minimumDuration)
        case .dwell: .optionalNumber(\.dwell, \.dwell)
        case .initialTrigger: .trigger(\.initialTrigger, \.initialTrigger)
        }
    }

    /// The unit of a number rule: "m" or "s"; nil for the others.
    package var unit: String? {
        switch self {
        case .maximumAccuracy, .hysteresis: "m"
        case .minimumDuration, .dwell: "s"
        case .accuracyAware, .initialTrigger: nil
        }
    }

    /// Whether 0 is refused: a dwell of 0 s would fire on entry, so "no dwell" is written
    /// by leaving the rule out.
    package var refusesZero: Bool { self == .dwell }

    /// What the default means when `TransitionRules` holds nil for it.
    package var unsetMeaning: String? {
        switch self {
        case .hysteresis: "max(10 m, 10 % of the fence's radius)"
        case .dwell: "off"
        default: nil
        }
    }

    /// What the rule does, for help text and documentation.
    package var help: String {
        switch self {
        case .maximumAccuracy:
            "Fixes whose accuracy radius is larger (worse) than this many metres do not decide transitions; 0 turns the check off. A fix without an accuracy counts as accurate."
        case .accuracyAware:
            "Decide with the fix's accuracy circle, not just its centre: inside only when the circle is, outside only when it is beyond the exit margin."
        case .hysteresis:
            "How far beyond the edge, in metres, a device must be before it exits."
        case .minimumDuration:
            "Seconds a new inside/outside relation must hold before its transition is published; a shorter in-and-out publishes nothing. 0 is off."
        case .dwell:
            "Seconds inside after which a dwell transition fires, once per stay."
        case .initialTrigger:
            "What the first fix for a fence does: none (as on iOS), enter when it starts inside, or exit when it starts outside (as Android's initial triggers)."
        }
    }
}
