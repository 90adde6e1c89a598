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
/// The parts the broker kept (retained) arrive in a burst after each subscription,
/// one after another: a total added up before the burst is over would be short, and Home
/// Assistant would see a zone empty for a moment after instance 0 restarts. So instance
/// 0 holds the totals of the parts that arrive retained and publishes them once a tick
/// of housekeeping went by without another (`settle`); a part published live (an
/// instance's count changing) is added at once.
///
/// It runs on the network thread (the parts arrive as messages) and the housekeeping
/// queue (`settle`); the lock keeps the two apart.
final class ShardOccupancy: Sendable {
    private struct Sums {
        /// Each fence's parts by instance.
        var parts: [Occupancy.Key: [Int: Int]] = [:]
        /// The totals published so far.
        var published: [Occupancy.Key: Int] = [:]
        /// The fences whose total waits for the retained parts to be all read.
        var held: Set<Occupancy.Key> = []
        /// Whether a retained part arrived since the last `settle`.
        var retainedSinceSettle = false
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
            if part.retained {
                sums.held.insert(key)
                sums.retainedSinceSettle = true
                return nil
            }
            sums.held.remove(key)
            return Self.newTotal(of: key, in: &sums)
        }
        if let total { queue([message(key, total)]) }
    }

    /// Hands `queue` the totals held for retained parts (see the type's description) once
    /// none arrived since the last call: called every tick of housekeeping.
    func settle(queue: ([OutboxMessage]) -> Void) {
        guard topics.shard?.index == 0 else { return }
        sums.withLock { sums in
            guard !sums.held.isEmpty else { return }
            if sums.retainedSinceSettle {
                sums.retainedSinceSettle = false
                return
            }
            let held = sums.held.sorted { ($0.owner, $0.fence) < ($1.owner, $1.fence) }
            sums.held = []
            let messages = held.compactMap { key in Self.newTotal(of: key, in: &sums).map { message(key, $0) } }
            if !messages.isEmpty { queue(messages) }
        }
    }

    /// The total of `key`'s parts if it differs from the one published last (which it
    /// then becomes); `.some(nil)` when its parts are all cleared and a total was
    /// published, to clear it.
    private static func newTotal(of key: Occupancy.Key, in sums: inout Sums) -> Int?? {
        guard let parts = sums.parts[key] else {
            return sums.published.removeValue(forKey: key) == nil ? nil : .some(nil)
        }
        let total = parts.values.reduce(0, +)
        guard sums.published[key] != total else { return nil }
        sums.published[key] = total
        return .some(total)
    }

    /// The retained total of `key` (cleared when nil), at QoS 1.
    private func message(_ key: Occupancy.Key, _ total: Int?) -> OutboxMessage {
        OutboxMessage(
            topic: topics.occupancyTotal(owner: key.owner, fence: key.fence), payload: total.map { Array(String($0).utf8) } ?? [],
            qos: 1, retain: true)
    }
}
