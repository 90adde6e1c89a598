import CMosquitto

/// Something that happened on a client's connection, reported to the `onEvent` closure
/// given to `MQTTClient` (on the client's network thread).
///
/// Failures are reported when the state changes, not once per retry: while the client
/// keeps retrying, an attempt that fails exactly as the one before it (the same refusal,
/// the same error with the same reason) is not reported again, until a connection has
/// been accepted in between. So a broker that stays down, or credentials it keeps
/// refusing, give one event, however long it lasts.
package enum MQTTEvent: Sendable {
    /// The broker accepted the connection. `sessionPresent` says it still held this
    /// client's session (subscriptions and queued messages) from an earlier connection;
    /// when false, subscribe again. It comes once libmosquitto has queued again the
    /// QoS 1 and 2 messages it held from before (those in flight at the drop, and those
    /// a publish without a connection left with it, `MQTTError.keptMessageID`), so what
    /// is published on hearing of it goes out after them.
    case connected(sessionPresent: Bool)
    /// The broker answered CONNECT with a refusal (bad credentials, not authorised, ...).
    /// `code` is the CONNACK return code (v3.1.1) or reason code (v5); `.disconnected`
    /// follows. The client keeps retrying with backoff, for v3.1.1 and v5 alike (the
    /// broker's password file may be fixed meanwhile): call `stop()` if the refusal is
    /// final.
    case connectionRefused(code: Int, reason: String)
    /// The connection ended, or an attempt to make one failed (nothing listening, host
    /// not resolvable, a TLS failure, ...). `code` 0 means `stop()` asked for it; anything
    /// else is a libmosquitto error (connection lost, keep-alive timeout, ...) or an MQTT
    /// v5 reason code sent by the broker. The client reconnects by itself unless stopped.
    /// A stop whose DISCONNECT could not be sent (the broker read nothing for a couple of
    /// seconds) ends with `MOSQ_ERR_TIMEOUT`: the broker then publishes the will.
    ///
    /// `code` `sessionTakenOver` (0x8E) means another client connected with this client's
    /// id and the broker gave it this client's session: an MQTT v5 broker said so, or the
    /// broker closed the connection right after accepting it several times in a row
    /// (`SessionTakeover`); `reason` says which, naming the client id.
    case disconnected(code: Int, reason: String)
    /// A message arrived on a subscription.
    case message(MQTTMessage)
    /// The client has delivered every message and acknowledgement it has read so far and
    /// is about to wait for more: the end of a burst, where a consumer that gathers
    /// messages hands them on. It follows each burst of `.message` and `.published` events.
    case caughtUp
    /// A publish completed: the broker acknowledged (PUBACK/PUBCOMP) a QoS 1 or 2
    /// message, or a QoS 0 message was handed to the network. The id is the one
    /// `MQTTClient.publish` returned.
    case published(messageID: Int32)
    /// The broker took a QoS 1 or 2 message and refused it: an MQTT v5 PUBACK (or PUBREC)
    /// with a reason code of 0x80 or more, `reason` its text (0x87 "Not authorized": the
    /// broker's access rules do not let this client publish to the topic; 0x97 "Quota
    /// exceeded", ...). The message is not delivered, and sending it again would not
    /// change that: the publish is over, as after `.published`. An MQTT 3.1.1 broker
    /// cannot say so (mosquitto acknowledges such a message and drops it).
    case publishRefused(messageID: Int32, code: Int, reason: String)
    /// The broker acknowledged a subscription; `grantedQoS` holds one entry a filter
    /// (128 or more means the broker refused that filter).
    case subscribed(messageID: Int32, grantedQoS: [Int])
    /// The broker acknowledged an unsubscription (UNSUBACK): nothing more comes for the
    /// filter. The id is the one `MQTTClient.unsubscribe` returned.
    case unsubscribed(messageID: Int32)

    /// The text of an MQTT v5 reason code (`Not authorized` for 0x87), as libmosquitto
    /// words it.
    package static func reason(of code: Int) -> String {
        String(cString: mosquitto_reason_string(Int32(code)))
    }

    /// Why an attempt ended that the broker closed after taking the TCP connection and
    /// CONNECT, before it answered with a CONNACK: an MQTT 3.1.1 broker cannot say why it
    /// refuses some connections, and mosquitto 2.0.11 closes them so (with
    /// `max_connections` reached, or a will it refuses: `retain_available false`, a will
    /// QoS above the listener's `max_qos`), as a listener that expects TLS closes a plain
    /// one. Reported as `.disconnected` with `MOSQ_ERR_CONN_LOST` (7) and this reason,
    /// where libmosquitto's words, "The connection was lost.", read as a network failure.
    package static let closedUnanswered = "the broker closed the connection without answering CONNECT"

    /// Whether this reports an attempt the broker closed without answering CONNECT
    /// (`closedUnanswered`).
    package var isClosedUnanswered: Bool {
        if case .disconnected(let code, let reason) = self { return code == Int(MOSQ_ERR_CONN_LOST.rawValue) && reason == MQTTEvent.closedUnanswered }
        return false
    }

    /// The `.disconnected` code of a session taken over by another client with the same
    /// client id: MQTT v5's reason code "Session taken over".
    package static let sessionTakenOver = Int(SessionTakeover.reasonCode)

    /// Whether this reports this client's session taken over by another client with the
    /// same client id (a `.disconnected` with code `sessionTakenOver`).
    package var isSessionTakenOver: Bool {
        if case .disconnected(let code, _) = self { return code == MQTTEvent.sessionTakenOver }
        return false
    }
}
