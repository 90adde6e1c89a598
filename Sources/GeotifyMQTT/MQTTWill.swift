/// The "last will" a broker publishes for a client whose connection ends without a clean
/// DISCONNECT (crash, network loss, keep-alive timeout), so others learn it went away.
package struct MQTTWill: Sendable, Equatable {
    /// The topic the will is published to; no wildcards.
    package var topic: String
    /// The will's payload, any bytes.
    package var payload: [UInt8]
    /// The QoS the broker publishes the will with: 0, 1 or 2.
    package var qos: Int
    /// Whether the broker keeps the will as the topic's retained message.
    package var retain: Bool

    /// Creates a will message.
    package init(topic: String, payload: [UInt8], qos: Int = 1, retain: Bool = true) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
    }
}
