import GeotifyMQTT

/// A message routed to a device's lane: copied out of the network callback as it
/// arrived, to be decoded and evaluated on the lane.
package struct Inbound: Sendable {
    /// What the topic said the message is.
    package enum Route: Sendable {
        case location(LocationDecoder.Format)
        case command
    }

    package var route: Route
    package var device: String
    package var message: MQTTMessage
    /// When it arrived, in seconds since 1970.
    package var arrival: Double

    package init(route: Route, device: String, message: MQTTMessage, arrival: Double) {
        self.route = route
        self.device = device
        self.message = message
        self.arrival = arrival
    }
}
