/// A message received from (or built for) a broker, copied out of libmosquitto's memory
/// so it can outlive the callback that delivered it.
public struct MQTTMessage: Sendable, Equatable {
    /// The topic the message was published to.
    public var topic: String
    /// The message's bytes.
    public var payload: [UInt8]
    /// The QoS the message was delivered with.
    public var qos: Int
    /// Whether the broker delivered it as a retained message (stored earlier).
    public var retain: Bool
    /// The MQTT v5 Response Topic property: where a reply is expected. Nil on v3.1.1.
    public var responseTopic: String?
    /// The MQTT v5 Correlation Data property, echoed in a reply. Nil on v3.1.1.
    public var correlationData: [UInt8]?

    /// Creates a message.
    public init(
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
