import GeotifyStore
import Synchronization

/// The deliveries the lanes together keep in memory while their commits fail (a full
/// disk), counted by target, so that each target's `maximumQueued` bounds them all: each
/// lane bounding only its own (`DeliveryBound.hold`) let an outage keep the bound once a
/// lane, as many times as there are lanes. (A device's deliveries are all on its lane, so
/// `maximumQueuedPerDevice` needs no count across lanes.)
///
/// A lane gives what it held back when it holds again (its held ones come first in what
/// it holds next) and when a commit writes them.
final class HeldDeliveries: Sendable {
    /// Each target's bound, by target name.
    let bounds: [String: DeliveryBound]
    /// How many deliveries the lanes hold, by target.
    private let counts = Mutex<[String: Int]>([:])

    init(bounds: [String: DeliveryBound]) {
        self.bounds = bounds
    }

    /// Holds what of `entries` (a lane's deliveries not committed: `previous`, those it
    /// held until now, first) the bounds allow beside what the other lanes hold; the
    /// rest, the newest, are refused.
    func hold(_ entries: [DeliveryEntry], replacing previous: [DeliveryEntry]) -> (held: [DeliveryEntry], refused: [DeliveryRefusal]) {
        counts.withLock { counts in
            Self.remove(previous, from: &counts)
            let result = DeliveryBound.hold(entries, within: bounds, alreadyHeld: counts)
            for entry in result.held { counts[entry.target, default: 0] += 1 }
            return result
        }
    }

    /// Gives back what a lane held (`entries`), committed now.
    func release(_ entries: [DeliveryEntry]) {
        guard !entries.isEmpty else { return }
        counts.withLock { Self.remove(entries, from: &$0) }
    }

    /// How many deliveries the lanes hold for `target`.
    func count(for target: String) -> Int {
        counts.withLock { $0[target] ?? 0 }
    }

    /// Takes `entries` out of `counts`. Giving back what was never held is a fault of the
    /// lanes: asserted in a debug build; a release build counts it as nothing held (a
    /// looser bound, not a stopped bridge).
    private static func remove(_ entries: [DeliveryEntry], from counts: inout [String: Int]) {
        for entry in entries {
            let left = (counts[entry.target] ?? 0) - 1
            assert(left >= 0, "HeldDeliveries: \(entry.eventID) given back for \(entry.target) was never held")
            counts[entry.target] = left > 0 ? left : nil
        }
    }
}
