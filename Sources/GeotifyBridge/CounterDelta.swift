/// Increments of counters gathered while handling a batch, added to the shared
/// `Counters` once per batch instead of under a lock per message.
///
/// `fixes_evaluated` is added once for nearly every message, so it is kept in a field of
/// its own; the other counters go through a dictionary (hashing a counter costs more
/// than the addition).
package struct CounterDelta: Sendable, Equatable {
    /// What `fixesEvaluated` gathered; the dictionary never holds that counter.
    private var evaluated = 0
    /// Every other counter that was added to.
    private var others: [Counter: Int] = [:]

    package init() {}

    /// Every counter that was added to, with its amount.
    package var amounts: [Counter: Int] {
        guard evaluated != 0 else { return others }
        var amounts = others
        amounts[.fixesEvaluated] = evaluated
        return amounts
    }

    /// Adds `amount` to `counter`.
    package mutating func add(_ counter: Counter, _ amount: Int = 1) {
        if case .fixesEvaluated = counter {
            evaluated += amount
        } else {
            others[counter, default: 0] += amount
        }
    }

    /// The amount gathered for `counter`.
    package subscript(_ counter: Counter) -> Int {
        if case .fixesEvaluated = counter { return evaluated }
        return others[counter] ?? 0
    }

    package var isEmpty: Bool { evaluated == 0 && others.isEmpty }

    /// Equal when they add the same amounts, however they were gathered.
    package static func == (lhs: CounterDelta, rhs: CounterDelta) -> Bool {
        lhs.amounts == rhs.amounts
    }
}
