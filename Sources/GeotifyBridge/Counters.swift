import Synchronization

/// Running totals of what the bridge did and refused, keyed by name
/// (`messages_received`, `notifications_published`, `errors.invalid_json`, ...), so
/// nothing is dropped without a trace.
public final class Counters: Sendable {
    private let values = Mutex<[String: Int]>([:])

    public init() {}

    /// Adds `amount` to the counter `name`.
    public func add(_ name: String, _ amount: Int = 1) {
        values.withLock { $0[name, default: 0] += amount }
    }

    /// Counts one refused input of `kind` (`errors.<kind>`).
    public func count(_ error: InputError) {
        add("errors.\(error.kind.rawValue)")
    }

    /// The value of `name`, 0 when it was never counted.
    public func value(_ name: String) -> Int {
        values.withLock { $0[name] ?? 0 }
    }

    /// All counters at this moment.
    public var snapshot: [String: Int] {
        values.withLock { $0 }
    }
}
