import GeotifyJSON
import Synchronization

/// The last notifications the bridge published, newest first, for the page's list: a
/// bounded ring filled from the live updates (so the bridge keeps no history for it; it
/// starts empty when the process does).
package final class RecentNotifications: Sendable {
    package let capacity: Int
    private let ring = Mutex<[JSON]>([])

    package init(capacity: Int = 100) {
        self.capacity = capacity
    }

    /// Adds a notification as the newest.
    package func add(_ notification: JSON) {
        ring.withLock { ring in
            ring.insert(notification, at: 0)
            if ring.count > capacity { ring.removeLast(ring.count - capacity) }
        }
    }

    /// Up to `limit`, newest first.
    package func newest(_ limit: Int) -> [JSON] {
        ring.withLock { Array($0.prefix(max(0, limit))) }
    }
}
