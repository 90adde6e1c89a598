import GeotifyCore
import Synchronization

/// How many devices are inside each shared fence, across all lanes: Home Assistant's
/// zone state. Kept as the set of devices inside each fence, so a repeated or late
/// update cannot skew the count.
final class Occupancy: Sendable {
    private let inside = Mutex<[String: Set<String>]>([:])

    /// The key of a shared fence: its owner and identifier.
    static func key(owner: String, fence: String) -> String { "\(owner)/\(fence)" }

    /// Fills the counts from the devices' persisted states at start.
    func load(_ states: [String: DeviceState], book: FenceBook) {
        inside.withLock { inside in
            for (device, state) in states {
                let fences = book.deviceFences(of: device)
                for entry in state.fences where entry.inside {
                    if let set = fences.owner(of: entry.fence) {
                        inside[Occupancy.key(owner: set.owner, fence: entry.fence), default: []].insert(device)
                    }
                }
            }
        }
    }

    /// Records that `device` is now inside (or not) the shared fence; returns the new
    /// count when it changed.
    func update(owner: String, fence: String, device: String, inside isInside: Bool) -> Int? {
        inside.withLock { inside in
            let key = Occupancy.key(owner: owner, fence: fence)
            let changed = isInside ? inside[key, default: []].insert(device).inserted : inside[key]?.remove(device) != nil
            return changed ? inside[key]?.count ?? 0 : nil
        }
    }

    /// Forgets the fences not in `book` any more; returns their (owner, fence) pairs.
    func prune(to book: FenceBook) -> [(owner: String, fence: String)] {
        inside.withLock { inside in
            var removed: [(String, String)] = []
            for key in inside.keys {
                let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
                guard parts.count == 2, book.shared[parts[0]]?.fence(parts[1]) == nil else { continue }
                inside[key] = nil
                removed.append((parts[0], parts[1]))
            }
            return removed.sorted { ($0.0, $0.1) < ($1.0, $1.1) }
        }
    }
}
