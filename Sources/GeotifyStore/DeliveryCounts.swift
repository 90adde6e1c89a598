/// How the deliveries of one target stand, for `geotify notify status` and statistics:
/// numbers and the last error only, never a secret or a payload.
package struct DeliveryCounts: Sendable, Equatable {
    package var target: String
    /// Deliveries the target acknowledged, since the state database was created.
    package var delivered = 0
    /// Queued and not attempted yet.
    package var pending = 0
    /// Attempted, failed, and waiting for the next attempt.
    package var retrying = 0
    /// In the dead-letter table.
    package var dead = 0
    /// Not queued because the target's bound was reached (`DeliveryBound`), since the
    /// state database was created.
    package var refused = 0
    /// Dead letters deleted as the oldest beyond the target's bound.
    package var pruned = 0
    /// Why the last failed attempt failed, and when (wall-clock seconds).
    package var lastError: String?
    package var lastErrorAt: Double?

    package init(target: String) {
        self.target = target
    }
}
