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

    /// Records that a device is now inside (or not) a shared fence; returns the new count
    /// when it changed.
    func update(_ change: OccupancyChange) -> Int? {
        inside.withLock { inside in
            let key = Key(owner: change.owner, fence: change.fence)
            let changed = change.inside
                ? inside[key, default: []].insert(change.device).inserted
                : inside[key]?.remove(change.device) != nil
            return changed ? inside[key]?.count ?? 0 : nil
        }
    }

    /// How many devices are inside the shared fence `key`.
    func count(_ key: Key) -> Int {
        inside.withLock { $0[key]?.count ?? 0 }
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
