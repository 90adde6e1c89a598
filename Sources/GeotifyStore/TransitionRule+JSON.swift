import GeotifyCore
import GeotifyJSON

/// A transition rule's value as JSON: read into the defaults (`TransitionRules`, from the
/// settings file) or into a fence's overrides (`FenceRules`, from the fence file), with
/// the same checks and the same words for both.
extension TransitionRule {
    /// Reads the rule from `value` into a fence's overrides.
    package func decode(_ value: JSON, into rules: inout FenceRules) throws(FenceIssue) {
        switch field {
        case .number(_, let override), .optionalNumber(_, let override): rules[keyPath: override] = try number(value)
        case .flag(_, let override): rules[keyPath: override] = try JSONField.bool(value, key: rawValue)
        case .trigger(_, let override): rules[keyPath: override] = try trigger(value)
        }
    }

    /// Reads the rule from `value` into the defaults every fence follows.
    package func decode(_ value: JSON, into rules: inout TransitionRules) throws(FenceIssue) {
        switch field {
        case .number(let global, _): rules[keyPath: global] = try number(value)
        case .optionalNumber(let global, _): rules[keyPath: global] = try number(value)
        case .flag(let global, _): rules[keyPath: global] = try JSONField.bool(value, key: rawValue)
        case .trigger(let global, _): rules[keyPath: global] = try trigger(value)
        }
    }

    /// A fence's override of the rule as JSON, nil when it has none.
    package func encode(_ rules: FenceRules) -> JSON? {
        switch field {
        case .number(_, let override), .optionalNumber(_, let override): rules[keyPath: override].map(JSON.number)
        case .flag(_, let override): rules[keyPath: override].map(JSON.bool)
        case .trigger(_, let override): rules[keyPath: override].map { .string($0.rawValue) }
        }
    }

    /// The rule's default as JSON, nil when it is unset (see `unsetMeaning`).
    package func encode(_ rules: TransitionRules) -> JSON? {
        switch field {
        case .number(let global, _): .number(rules[keyPath: global])
        case .optionalNumber(let global, _): rules[keyPath: global].map(JSON.number)
        case .flag(let global, _): .bool(rules[keyPath: global])
        case .trigger(let global, _): .string(rules[keyPath: global].rawValue)
        }
    }

    private func number(_ value: JSON) throws(FenceIssue) -> Double {
        let number = try JSONField.number(value, key: rawValue, range: 0...Double.greatestFiniteMagnitude)
        if refusesZero, number == 0 {
            throw FenceIssue(.outOfRange, "\(rawValue) must be more than 0 seconds (leave it out for no \(rawValue))")
        }
        return number
    }

    private func trigger(_ value: JSON) throws(FenceIssue) -> InitialTrigger {
        try JSONField.choice(value, key: rawValue, among: InitialTrigger.allCases.map { ($0.rawValue, $0) })
    }
}
