import Synchronization

/// The bytes waiting in all the subscriptions of one `EventStream` together, and the most
/// they may be: each subscription takes from it what it queues beyond its opening and
/// gives back what is sent or dropped, so clients that stop reading cannot together hold
/// more than `maximum` (each one's own bound times the number of subscribers is far more
/// than the bridge's memory).
///
/// Taking is all or nothing and never passes `maximum`, whatever threads take and give
/// back at once; a subscription takes and gives back under its own lock, together with
/// the change to its queue, so the total is always the sum of what they hold.
final class PendingBudget: Sendable {
    /// The most bytes all subscriptions may hold waiting together.
    let maximum: Int
    private let held = Atomic<Int>(0)

    init(maximum: Int) {
        self.maximum = maximum
    }

    /// Takes `count` bytes when they fit under `maximum`; says whether they did.
    func take(_ count: Int) -> Bool {
        var current = held.load(ordering: .relaxed)
        while current + count <= maximum {
            let (exchanged, found) = held.compareExchange(expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = found
        }
        return false
    }

    /// Gives back `count` bytes taken before.
    func giveBack(_ count: Int) {
        guard count != 0 else { return }
        let left = held.subtract(count, ordering: .relaxed).newValue
        assert(count > 0 && left >= 0, "a subscription gave back \(count) bytes, leaving \(left): more than it took")
    }

    /// The bytes held now.
    var total: Int {
        held.load(ordering: .relaxed)
    }
}
