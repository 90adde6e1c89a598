import GeotifyStore
import Synchronization

/// Keeps the occupancy of shared fences right when several instances share the devices.
/// Each instance counts only its own devices and publishes that part, retained, on its
/// own topic (`Topics.occupancy`); this reads the parts back:
///
/// - every instance corrects a retained part of its own that disagrees with its count
///   (left by a crash, or by a reshard that moved devices away), and clears parts for
///   fences it has no device in;
/// - instance 0 adds up every instance's part and publishes the total, retained, on
///   `<prefix>/occupancy/<owner>/<fence>` (what Home Assistant reads), and clears the
///   parts of instances that no longer exist after a reshard to fewer.
///
/// It runs on the network thread (the parts arrive as messages); the lock only makes
/// the type `Sendable`.
final class ShardOccupancy: Sendable {
    private struct Sums {
        /// Each fence's parts by instance.
        var parts: [Occupancy.Key: [Int: Int]] = [:]
        /// The totals published so far.
        var published: [Occupancy.Key: Int] = [:]
    }

    private let topics: Topics
    private let occupancy: Occupancy
    private let sums = Mutex(Sums())

    init(topics: Topics, occupancy: Occupancy) {
        self.topics = topics
        self.occupancy = occupancy
    }

    /// Hands `queue` what to publish after reading `part`: a corrected or cleared part, a
    /// new total. A correction is read from the count and queued under the count's lock
    /// (`Occupancy.counts`), so it goes out in order with the lanes' changes.
    func receive(_ part: OccupancyPart, queue: ([OutboxMessage]) -> Void) {
        guard let shard = topics.shard else { return }
        let key = Occupancy.Key(owner: part.owner, fence: part.fence)
        if part.shard == shard.index, part.retained, let count = part.count {
            occupancy.counts(of: [key]) { counts in
                guard let own = counts.first, own != count else { return }
                queue([OutboxMessage(
                    topic: topics.occupancy(owner: part.owner, fence: part.fence), payload: own == 0 ? [] : Array(String(own).utf8),
                    qos: 1, retain: true)])
            }
        }
        guard shard.index == 0 else { return }
        if part.shard >= shard.count {
            if part.count != nil {
                queue([OutboxMessage(
                    topic: topics.occupancy(ofShard: part.shard, owner: part.owner, fence: part.fence), payload: [], qos: 1, retain: true)])
            }
            return
        }
        let total = sums.withLock { sums -> Int?? in
            sums.parts[key, default: [:]][part.shard] = part.count
            if sums.parts[key]?.isEmpty == true { sums.parts[key] = nil }
            guard let parts = sums.parts[key] else {
                return sums.published.removeValue(forKey: key) == nil ? nil : .some(nil)
            }
            let total = parts.values.reduce(0, +)
            guard sums.published[key] != total else { return nil }
            sums.published[key] = total
            return .some(total)
        }
        if let total {
            queue([OutboxMessage(
                topic: topics.occupancyTotal(owner: part.owner, fence: part.fence), payload: total.map { Array(String($0).utf8) } ?? [],
                qos: 1, retain: true)])
        }
    }
}
