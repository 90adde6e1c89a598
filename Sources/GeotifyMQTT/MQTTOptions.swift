/// Everything an `MQTTClient` needs to know to connect: where, as whom, how (protocol
/// version, TLS, keep-alive), what to leave behind (the will) and how to retry.
package struct MQTTOptions: Sendable, Equatable {
    /// The broker's host name or IP address.
    package var host: String = "127.0.0.1"
    /// The broker's TCP port.
    package var port: Int = 1883
    /// The client identifier. Required (non-empty) when `cleanSession` is false, since
    /// the broker finds the stored session by it; with a clean session an empty id lets
    /// libmosquitto make a random one.
    package var clientID: String
    /// True: the broker forgets subscriptions and queued messages when the connection
    /// ends. False (the default): it keeps them for the next connection with this id.
    package var cleanSession: Bool = false
    /// The keep-alive interval in seconds: 5 to 65 535 (libmosquitto's lower bound).
    package var keepAlive: Int = 30
    /// The MQTT protocol version to speak.
    package var protocolVersion: MQTTProtocolVersion = .v311
    /// The user name sent in CONNECT, if any.
    package var username: String?
    /// The password sent in CONNECT, if any; needs a `username`.
    package var password: String?
    /// TLS settings; nil for a plain TCP connection.
    package var tls: MQTTTLS?
    /// The message the broker publishes if this client's connection dies uncleanly.
    package var will: MQTTWill?
    /// The first delay's ceiling, in seconds, before reconnecting after a lost connection
    /// or a failed attempt (at least 0.01: tests retry within milliseconds, against
    /// brokers they restart themselves).
    package var reconnectDelayMin: Double = 1
    /// The largest delay, in seconds, between connection attempts: the ceiling doubles
    /// from `reconnectDelayMin` up to this with each failed attempt, and each delay is
    /// shortened by a random share of up to half, so clients cut off together do not
    /// come back together. A connection that lasts this long starts again from the
    /// minimum. See `ReconnectBackoff`.
    package var reconnectDelayMax: Double = 30
    /// The most QoS 1 and 2 messages this client has in flight (sent, not yet
    /// acknowledged) at once; libmosquitto queues the rest. 1...65535; libmosquitto's
    /// default is 20.
    package var maximumInFlight: Int = 20
    /// The largest packet this client takes from the broker, in bytes, nil for no limit.
    /// Over MQTT 5 the broker is told on connecting (CONNECT's Maximum Packet Size) and
    /// drops a larger message for this client instead of sending it (mosquitto 2.0.11
    /// logs "Dropping too large outgoing PUBLISH"). MQTT 3.1.1 has no way to say it:
    /// there a larger message is read without its payload, which is dropped as it comes,
    /// and delivered with `payloadLeftOut` saying how much was left out (over TLS it is
    /// cut in the plaintext OpenSSL decrypts: `geotify_buffered_socket_attach_tls`).
    package var maximumIncomingPacketBytes: Int?

    /// Creates options for a client; set the other fields as needed.
    package init(clientID: String, host: String = "127.0.0.1", port: Int = 1883) {
        self.clientID = clientID
        self.host = host
        self.port = port
    }

    /// Throws a specific error for the first setting libmosquitto would reject or that
    /// cannot work, so `MQTTClient` fails at creation instead of on the network thread.
    func validate() throws(MQTTError) {
        let operation = "check MQTT options"
        guard !host.isEmpty, !host.utf8.contains(0) else {
            throw .invalid(operation, "the broker host is empty or contains a NUL character")
        }
        guard (1...65_535).contains(port) else {
            throw .invalid(operation, "port \(port) is not between 1 and 65535")
        }
        guard cleanSession || !clientID.isEmpty else {
            throw .invalid(operation, "a client id is required when clean session is off")
        }
        guard !clientID.utf8.contains(0), clientID.utf8.count <= MQTTTopic.maximumLength else {
            throw .invalid(operation, "the client id contains a NUL character or is longer than 65535 bytes")
        }
        guard (5...65_535).contains(keepAlive) else {
            throw .invalid(operation, "keep-alive \(keepAlive) s is not between 5 and 65535 seconds")
        }
        guard password == nil || username != nil else {
            throw .invalid(operation, "a password needs a username")
        }
        guard reconnectDelayMin >= 0.01, reconnectDelayMax >= reconnectDelayMin, reconnectDelayMax.isFinite else {
            throw .invalid(
                operation,
                "reconnect delays must satisfy 0.01 <= min <= max seconds, not min \(reconnectDelayMin) max \(reconnectDelayMax)"
            )
        }
        if let bytes = maximumIncomingPacketBytes, !(1...Int(UInt32.max)).contains(bytes) {
            throw .invalid(operation, "the largest incoming packet, \(bytes) bytes, is not between 1 and \(UInt32.max)")
        }
        if let will {
            try MQTTTopic.checkName(will.topic, operation: "check the will")
            guard (0...2).contains(will.qos) else {
                throw .invalid("check the will", "QoS \(will.qos) is not 0, 1 or 2")
            }
            guard will.payload.count <= 65_535 else {
                throw .invalid(
                    "check the will", "the payload is \(will.payload.count) bytes; a will holds at most 65535"
                )
            }
        }
        if let tls {
            guard (tls.certFile == nil) == (tls.keyFile == nil) else {
                throw .invalid("check TLS options", "certFile and keyFile must be given together")
            }
        }
    }
}
