import CMosquitto

/// Why a connection to the broker could not be made, in the words an operator acts on:
/// nothing listens there, the host name does not resolve, TLS failed, or the broker
/// refused the login. Made from the first failure event of a client that has not
/// connected yet, so a one-shot command (`geotify status`) can stop at once with the
/// reason instead of waiting out its timeout.
package struct ConnectionFailure: Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure it is.
    package enum Kind: String, Sendable {
        /// Nothing accepts TCP connections at the address (or the network is unreachable).
        case unreachable
        /// The host name does not resolve.
        case unknownHost
        /// The TLS handshake or certificate check failed.
        case tls
        /// The broker answered CONNECT with a refusal: credentials, authorisation, client id.
        case refused
        /// The connection ended before the broker answered.
        case other
    }

    package var kind: Kind
    /// The broker's address, as given.
    package var broker: String
    /// libmosquitto's or the broker's reason.
    package var reason: String

    /// The failure `event` reports, or nil when it reports none (`.connected`, a
    /// message, a stop on request).
    package init?(_ event: MQTTEvent, broker: String) {
        switch event {
        case .connectionRefused(_, let reason):
            self.init(kind: .refused, broker: broker, reason: reason)
        case .disconnected(let code, let reason) where code != 0:
            let kind: Kind = switch Int32(code) {
            case MOSQ_ERR_EAI.rawValue: .unknownHost
            case MOSQ_ERR_TLS.rawValue, MOSQ_ERR_TLS_HANDSHAKE.rawValue: .tls
            case MOSQ_ERR_ERRNO.rawValue, MOSQ_ERR_NO_CONN.rawValue, MOSQ_ERR_CONN_REFUSED.rawValue: .unreachable
            default: .other
            }
            self.init(kind: kind, broker: broker, reason: reason)
        default:
            return nil
        }
    }

    package init(kind: Kind, broker: String, reason: String) {
        self.kind = kind
        self.broker = broker
        self.reason = reason
    }

    package var description: String {
        switch kind {
        case .unreachable: "cannot reach the broker at \(broker): \(reason) (is it running, and on this port?)"
        case .unknownHost: "cannot reach the broker at \(broker): the host name does not resolve (\(reason))"
        case .tls: "TLS with the broker at \(broker) failed: \(reason) (check the URL's port, tls.caFile and the certificate's host name)"
        case .refused: "the broker at \(broker) refused the login: \(reason) (check username and password, GEOTIFY_MQTT_PASSWORD or passwordFile)"
        case .other: "the connection to the broker at \(broker) ended before it was accepted: \(reason)"
        }
    }
}
