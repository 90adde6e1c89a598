/// Something that happened on a client's connection, reported to the `onEvent` closure
/// given to `MQTTClient` (on libmosquitto's network thread).
public enum MQTTEvent: Sendable {
    /// The broker accepted the connection. `sessionPresent` says it still held this
    /// client's session (subscriptions and queued messages) from an earlier connection.
    case connected(sessionPresent: Bool)
    /// The broker answered CONNECT with a refusal (bad credentials, not authorised, ...).
    /// `code` is the CONNACK return code (v3.1.1) or reason code (v5); `.disconnected`
    /// follows. libmosquitto then keeps retrying a v3.1.1 connection but gives a v5 one
    /// up (its network thread ends): call `stop()` if the refusal is final.
    case connectionRefused(code: Int, reason: String)
    /// The connection ended, or an attempt to make one failed for a reason other than an
    /// absent broker (a TLS failure, say). `code` 0 means `stop()` asked for it; anything
    /// else is a libmosquitto error (connection lost, keep-alive timeout, ...) or an MQTT
    /// v5 reason code sent by the broker. The client reconnects by itself unless stopped.
    case disconnected(code: Int, reason: String)
    /// A message arrived on a subscription.
    case message(MQTTMessage)
    /// A publish completed: the broker acknowledged (PUBACK/PUBCOMP) a QoS 1 or 2
    /// message, or a QoS 0 message was handed to the network. The id is the one
    /// `MQTTClient.publish` returned.
    case published(messageID: Int32)
    /// The broker acknowledged a subscription; `grantedQoS` holds one entry a filter
    /// (128 or more means the broker refused that filter).
    case subscribed(messageID: Int32, grantedQoS: [Int])
}
