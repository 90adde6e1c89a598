/// A delivery waiting in the queue: the entry, when it is due, and how it went so far.
package struct DeliveryRow: Sendable, Equatable {
    /// The row id: queue order, and the handle for marking the outcome.
    package var id: Int64
    package var entry: DeliveryEntry
    /// Wall-clock seconds when it was queued (or taken back from the dead letters): the
    /// retry window is measured from here.
    package var queued: Double
    /// Wall-clock seconds of the next attempt.
    package var due: Double
    /// Attempts made so far; 0 while it is pending, more while it is retrying.
    package var attempts: Int
    /// Why the last attempt failed, if one did.
    package var lastError: String?

    package init(id: Int64, entry: DeliveryEntry, queued: Double, due: Double, attempts: Int, lastError: String?) {
        self.id = id
        self.entry = entry
        self.queued = queued
        self.due = due
        self.attempts = attempts
        self.lastError = lastError
    }
}
