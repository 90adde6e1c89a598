/// A queued notification that is not the JSON the bridge writes: the delivery is
/// dead-lettered with this reason instead of being retried, since no retry can mend it.
package struct UnreadableNotification: Error, Sendable, Equatable, CustomStringConvertible {
    package var reason: String

    package init(_ reason: String) {
        self.reason = reason
    }

    package var description: String { reason }
}
