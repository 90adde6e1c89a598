import CMosquitto

/// Tells, from how accepted connections end, that another client keeps connecting with
/// this client's id, so the broker hands it this client's session and closes this one:
/// a second bridge configured alike, or anyone whose credentials let them pick the id.
///
/// An MQTT v5 broker says so (DISCONNECT with reason code 0x8E, "Session taken over";
/// mosquitto from 2.0.15): that is a takeover at once. mosquitto 2.0.11 (Debian 12), and
/// every MQTT 3.1.1 broker, just closes the connection, which looks like any lost
/// connection; what gives it away is the pattern: the broker accepts the connection and
/// closes it again soon after, time and again, while the network and the broker are
/// evidently fine (every reconnection is accepted at once). So `threshold` such
/// connections in a row, each closed by the broker within `shortConnection` seconds of
/// being accepted, count as a takeover; a connection that lasts, an attempt that fails
/// and any other kind of ending start the count again.
///
/// Once it has called a takeover, every further short connection closed by the broker
/// is one too, until the pattern breaks.
///
/// A pure value: the caller passes how each connection ended and how long it lasted.
struct SessionTakeover: Sendable {
    /// The DISCONNECT reason code of MQTT v5 for a session taken over.
    static let reasonCode: Int32 = 0x8E
    /// How many short connections in a row closed by the broker make a takeover.
    static let threshold = 3

    /// A connection closed by the broker sooner than this, in seconds, after being
    /// accepted counts towards a takeover.
    let shortConnection: Double
    /// Short connections closed by the broker in a row so far.
    private(set) var streak = 0

    /// Watches connections whose being closed within `shortConnection` seconds is
    /// suspicious: the reconnection backoff's maximum, since the twin's reconnections
    /// (which close this client's connection) come at most that far apart.
    init(shortConnection: Double) {
        self.shortConnection = shortConnection
    }

    /// Records how an attempt ended: with `code` (a libmosquitto error or an MQTT v5
    /// reason code), after the broker had accepted the connection for `connectedFor`
    /// seconds (nil: it never did). Returns whether this ending shows a takeover.
    mutating func ended(code: Int32, connectedFor: Double?) -> Bool {
        if code == Self.reasonCode {
            streak = 0
            return true
        }
        guard let connectedFor, code == Self.closedByBroker, connectedFor < shortConnection else {
            streak = 0
            return false
        }
        streak += 1
        return streak >= Self.threshold
    }

    /// libmosquitto's code for a connection the other side closed.
    static let closedByBroker = MOSQ_ERR_CONN_LOST.rawValue
}
