/// A hand-over mark (`outbox.handed`) that the state store found damaged when it opened
/// (a torn or garbled write, a file cut short), and what it did about it.
///
/// How far the outbox was handed to the broker could not be told, so every message then
/// in the outbox was taken as handed over and the mark written whole again past the last
/// of them: a message never handed over is lost rather than one handed over published a
/// second time (the promise is "nothing is ever published twice").
package struct DamagedOutboxMark: Sendable, Equatable {
    /// The mark's file.
    package var path: String
    /// What was wrong with it.
    package var damage: String
    /// The outbox messages not sent because of it (those a sound empty mark would send).
    package var skipped: Int
    /// Where the mark stands now: the last outbox id.
    package var handedThrough: Int64

    /// What the log says.
    package var warning: String {
        "the outbox hand-over mark \(path) was damaged (\(damage)), so whether the \(skipped) messages in the outbox were handed to the broker before the last stop cannot be told: none of them is sent, so no subscriber sees a notification twice (those never handed over are lost); the mark was written again at \(handedThrough)"
    }
}
