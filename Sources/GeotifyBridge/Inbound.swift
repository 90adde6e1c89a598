import GeotifyMQTT

/// A message routed to a device's lane: copied out of the network callback as it
/// arrived, to be decoded and evaluated on the lane.
struct Inbound: Sendable {
    /// What the topic said the message is.
    enum Route: Sendable {
        case location(LocationDecoder.Format)
        case command
    }

    var route: Route
    var device: String
    var message: MQTTMessage
    /// When it arrived, in seconds since 1970.
    var arrival: Double
}
