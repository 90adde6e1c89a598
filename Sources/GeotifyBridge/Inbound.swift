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
    /// Who waits for the outcome in this process (the HTTP console's request), if anyone:
    /// its answer comes back as a `LaneAnswer` instead of an MQTT reply. Nil as made; the
    /// lane sets it on the copy it handles for the console (`Lane.handle(_:answer:)`).
    package var requester: Int?

    package init(route: Route, device: String, message: MQTTMessage, arrival: Double) {
        self.route = route
        self.device = device
        self.message = message
        self.arrival = arrival
    }
}
