import CMosquitto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed MQTT operation: which operation, libmosquitto's error code (a `mosq_err_t`,
/// or `MOSQ_ERR_INVAL` for input this module rejects itself) and a readable message.
package struct MQTTError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What was being done, such as "publish" or "parse broker URL".
    package var operation: String
    /// The libmosquitto error code (`mosq_err_t`).
    package var code: Int32
    /// A human-readable explanation.
    package var message: String
    /// The id of the message a failed publish leaves with libmosquitto: a QoS 1 or 2
    /// message it queued before the write failed (not connected, the connection lost, a
    /// failed write). libmosquitto sends it when the connection is back (it resends what
    /// it holds in flight itself), and the `.published` event for this id follows; so
    /// it must not be published again. Nil for everything else.
    package var keptMessageID: Int32?

    /// Creates an error from its parts.
    package init(operation: String, code: Int32, message: String) {
        self.operation = operation
        self.code = code
        self.message = message
    }

    /// "operation: message (code n)", for logs and command-line output.
    package var description: String {
        "\(operation): \(message) (code \(code))"
    }

    /// Whether the operation failed for want of a connection (`MOSQ_ERR_NO_CONN`): a
    /// publish or subscribe while disconnected, worth trying again after `.connected`.
    package var isNotConnected: Bool {
        code == MOSQ_ERR_NO_CONN.rawValue
    }

    /// Whether a publish was refused because its packet is larger than the broker takes
    /// (`MOSQ_ERR_OVERSIZE_PACKET`: an MQTT 5 broker's Maximum Packet Size): nothing was
    /// queued, and the same message would be refused again.
    package var isOversize: Bool {
        code == MOSQ_ERR_OVERSIZE_PACKET.rawValue
    }

    /// Whether `code`, returned by `mosquitto_publish_v5` for a QoS 1 or 2 message, comes
    /// from writing it, after libmosquitto 2.0.11 queued it (`message__queue` appends the
    /// message to its list in flight, then `send__publish` fails): those codes come from
    /// the write and nothing before it.
    static func leavesMessageQueued(_ code: Int32) -> Bool {
        code == MOSQ_ERR_NO_CONN.rawValue || code == MOSQ_ERR_CONN_LOST.rawValue || code == MOSQ_ERR_ERRNO.rawValue
    }

    /// An error for input this module rejects before calling libmosquitto.
    static func invalid(_ operation: String, _ message: String) -> MQTTError {
        MQTTError(operation: operation, code: MOSQ_ERR_INVAL.rawValue, message: message)
    }

    /// An error for a libmosquitto return code, explained by `mosquitto_strerror`, or by
    /// the C library's `strerror` for `MOSQ_ERR_ERRNO` (read at once, before errno changes).
    static func mosquitto(_ operation: String, _ code: Int32) -> MQTTError {
        let text: String
        if code == MOSQ_ERR_ERRNO.rawValue {
            text = String(cString: strerror(errno))
        } else {
            text = String(cString: mosquitto_strerror(code))
        }
        return MQTTError(operation: operation, code: code, message: text)
    }

    /// Throws `mosquitto(operation, code)` unless `code` is `MOSQ_ERR_SUCCESS`.
    static func check(_ operation: @autoclosure () -> String, _ code: Int32) throws(MQTTError) {
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            throw mosquitto(operation(), code)
        }
    }
}
