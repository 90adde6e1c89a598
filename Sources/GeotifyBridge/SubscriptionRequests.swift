import GeotifyMQTT

/// What the retained sweep (`RetainedCollection`) asks of the connection: to subscribe
/// to its filters and unsubscribe from them, each request's message id returned so that
/// its acknowledgement can be matched. `MQTTClient` in the bridge; in a test, a stand-in
/// that hands an acknowledgement in from another thread while the later filters' requests
/// are still being sent, as a network loop that reads it first does.
protocol SubscriptionRequests: Sendable {
    /// Sends a SUBSCRIBE of `filter` and returns its message id.
    func subscribe(_ filter: String, qos: Int) throws(MQTTError) -> Int32
    /// Sends an UNSUBSCRIBE of `filter` and returns its message id.
    func unsubscribe(_ filter: String) throws(MQTTError) -> Int32
}

extension MQTTClient: SubscriptionRequests {}
