/// A message the bridge has decided to publish. Those that follow from state are kept
/// in the state database's outbox from the moment the decision is committed until they
/// are handed to the broker, so that a crash between deciding and publishing loses
/// nothing.
public struct OutboxMessage: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    public var qos: Int
    public var retain: Bool
    /// The MQTT v5 correlation data of a reply to a request that asked for it; replies
    /// are not persisted, so this is never stored.
    public var correlationData: [UInt8]?

    public init(topic: String, payload: [UInt8], qos: Int, retain: Bool, correlationData: [UInt8]? = nil) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.correlationData = correlationData
    }
}
