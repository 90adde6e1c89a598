/// Increments of counters gathered while handling a batch, added to the shared
/// `Counters` once per batch instead of under a lock per message.
package struct CounterDelta: Sendable, Equatable {
    package private(set) var amounts: [Counter: Int] = [:]

    package init() {}

    /// Adds `amount` to `counter`.
    package mutating func add(_ counter: Counter, _ amount: Int = 1) {
        amounts[counter, default: 0] += amount
    }

    /// The amount gathered for `counter`.
    package subscript(_ counter: Counter) -> Int {
        amounts[counter] ?? 0
    }

    package var isEmpty: Bool { amounts.isEmpty }
}
