import GeotifyCore
import Synchronization

/// How many devices are inside each shared fence, across all lanes: Home Assistant's
/// zone state. Kept as the set of devices inside each fence, so a repeated or late
/// update cannot skew the count.
final class Occupancy: Sendable {
    /// A shared fence: its set's owner ("shared" or a group) and its identifier.
    struct Key: Hashable, Sendable {
        var owner: String
        var fence: String
    }

    private let inside = Mutex<[Key: Set<String>]>([:])

    /// Fills the counts from the devices' persisted states at start.
    func load(_ states: [String: DeviceState], book: FenceBook) {
        inside.withLock { inside in
            for (device, state) in states {
                let fences = book.deviceFences(of: device)
                for entry in state.fences where entry.inside {
                    if let set = fences.owner(of: entry.fence) {
                        inside[Key(owner: set.owner, fence: entry.fence), default: []].insert(device)
                    }
                }
            }
        }
    }

    /// Applies `changes` in order and hands `queue` the counts that changed, in that order,
    /// while still holding the lock. What `queue` queues for publishing is so queued in the
    /// order the counts changed in, across lanes and beside `counts(of:then:)`: a count
    /// read before a change can never be published after the change's count, which would
    /// leave a stale retained value for Home Assistant. A count given as nil is one of a
    /// fence its set no longer has that no device is left in (`OccupancyChange.fenceRemoved`):
    /// forgotten, its retained topic is to be emptied. `queue` must not use this object.
    func apply(_ changes: [OccupancyChange], then queue: ([(key: Key, count: Int?)]) -> Void) {
        inside.withLock { inside in
            var counts: [(key: Key, count: Int?)] = []
            for change in changes {
                if let count = Self.apply(change, to: &inside) {
                    counts.append((Key(owner: change.owner, fence: change.fence), count))
                }
            }
            queue(counts)
        }
    }

    /// Hands `queue` the counts of `keys`, in order, while holding the lock, so that what
    /// it queues is ordered with the changes `apply(_:then:)` queues (see there).
    func counts(of keys: [Key], then queue: ([Int]) -> Void) {
        inside.withLock { inside in queue(keys.map { inside[$0]?.count ?? 0 }) }
    }

    /// The new count of the change's fence, nil when it did not change; for a fence
    /// removed, `.some(nil)` when its last device left (the key is forgotten) and nil
    /// while others are left in it (a removed fence's count is not published).
    private static func apply(_ change: OccupancyChange, to inside: inout [Key: Set<String>]) -> Int?? {
        let key = Key(owner: change.owner, fence: change.fence)
        if change.fenceRemoved {
            guard inside[key]?.remove(change.device) != nil, inside[key]?.isEmpty == true else { return nil }
            inside[key] = nil
            return .some(nil)
        }
        let changed = change.inside
            ? inside[key, default: []].insert(change.device).inserted
            : inside[key]?.remove(change.device) != nil
        return changed ? inside[key]?.count ?? 0 : nil
    }

    /// Forgets the fences not in `book` any more; returns them, sorted.
    func prune(to book: FenceBook) -> [Key] {
        inside.withLock { inside in
            let removed = inside.keys.filter { book.shared[$0.owner]?.fence($0.fence) == nil }
            for key in removed { inside[key] = nil }
            return removed.sorted { ($0.owner, $0.fence) < ($1.owner, $1.fence) }
        }
    }
}
