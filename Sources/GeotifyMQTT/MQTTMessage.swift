/// A message received from (or built for) a broker, copied out of libmosquitto's memory
/// so it can outlive the callback that delivered it.
package struct MQTTMessage: Sendable, Equatable {
    /// The topic the message was published to.
    package var topic: String
    /// The message's bytes.
    package var payload: [UInt8]
    /// The QoS the message was delivered with.
    package var qos: Int
    /// Whether the broker delivered it as a retained message (stored earlier).
    package var retain: Bool
    /// The MQTT v5 Response Topic property: where a reply is expected. Nil on v3.1.1.
    package var responseTopic: String?
    /// The MQTT v5 Correlation Data property, echoed in a reply. Nil on v3.1.1.
    package var correlationData: [UInt8]?
    /// The payload bytes the client did not read, the message being larger than it takes
    /// (`MQTTOptions.maximumIncomingPacketBytes`, over MQTT 3.1.1): `payload` is then
    /// empty. 0 for a message read whole.
    package var payloadLeftOut = 0

    /// Creates a message.
    package init(
        topic: String,
        payload: [UInt8],
        qos: Int = 0,
        retain: Bool = false,
        responseTopic: String? = nil,
        correlationData: [UInt8]? = nil
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.responseTopic = responseTopic
        self.correlationData = correlationData
    }
}
