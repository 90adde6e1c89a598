/// What the delivery worker tells the bridge, on the worker's queue: for the log, the
/// counters, and `geotify/error` (a dead letter is reported exactly once, when it dies).
/// Texts are free of secrets.
package enum DeliveryReport: Sendable, Equatable {
    /// The target acknowledged the delivery on attempt number `attempts`.
    case delivered(target: String, eventID: String, attempts: Int)
    /// Attempt number `attempts` failed; the next is at wall-clock time `next`.
    case retrying(target: String, eventID: String, attempts: Int, next: Double, reason: String)
    /// The delivery was moved to the dead letters.
    case deadLettered(target: String, device: String, eventID: String, reason: String)
    /// `count` of the target's oldest dead letters were deleted, beyond its
    /// `maximumDeadLetters`, as a new one came.
    case deadLettersPruned(target: String, count: Int)
    /// The queue in the state database could not be read or written; the worker tries
    /// again at its next poll.
    case storeFailed(String)
}
