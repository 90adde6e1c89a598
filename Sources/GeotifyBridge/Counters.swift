import Synchronization

/// The bridge's running totals (`Counter`), shared by every thread. Per-message work
/// gathers its increments in a `CounterDelta` and adds them here once per batch.
package final class Counters: Sendable {
    private let values = Mutex<[Counter: Int]>([:])

    package init() {}

    /// Adds `amount` to `counter`.
    package func add(_ counter: Counter, _ amount: Int = 1) {
        values.withLock { $0[counter, default: 0] += amount }
    }

    /// Adds everything gathered in `delta`.
    package func add(_ delta: CounterDelta) {
        guard !delta.isEmpty else { return }
        values.withLock { values in
            for (counter, amount) in delta.amounts { values[counter, default: 0] += amount }
        }
    }

    /// The value of `counter`, 0 when it was never counted.
    package func value(_ counter: Counter) -> Int {
        values.withLock { $0[counter] ?? 0 }
    }

    /// All counters at this moment, by name (`errors.invalid_json`).
    package var snapshot: [String: Int] {
        values.withLock { values in
            Dictionary(values.map { ($0.key.name, $0.value) }, uniquingKeysWith: +)
        }
    }
}
