import CMosquitto
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small MQTT client over libmosquitto's threaded interface: it connects in the
/// background, reconnects by itself with a growing delay, and reports what happens as
/// `MQTTEvent`s. It exists so the rest of Geotify never touches the C API.
///
/// Thread safety (why `@unchecked Sendable` is sound):
/// - `handle` and `relay` are set once in `init` and only released in `deinit`.
/// - `publish`, `subscribe` and `mosquitto_disconnect` may be called from any thread
///   while the network thread runs: libmosquitto guards its queues and socket state with
///   its own mutexes.
/// - Everything else that touches the handle (applying options, connecting, starting and
///   joining the network thread) happens with the `phase` mutex held: in `start()`,
///   `stop()`, `deinit` and the first-connection retries on `connector`. `onEvent` is
///   never called with that mutex held. Inside a callback on the network thread,
///   `start()` refuses and `stop()` only disconnects, because joining the network thread
///   from itself would deadlock.
/// - State the callbacks change (connected or not) lives in `MQTTEventRelay` behind its
///   own mutex, which is never held while `onEvent` runs.
public final class MQTTClient: @unchecked Sendable {
    /// Where the client is in its life. libmosquitto 2.0.11's network thread never
    /// retries a first connection that failed at once (it waits for a state change that
    /// only a successful connect makes), so until one succeeds the client retries itself
    /// (`connecting`) and starts the network thread only then (`running`).
    private enum Phase {
        case stopped
        case connecting(generation: Int)
        case running
    }

    private let handle: OpaquePointer
    private let relay: Unmanaged<MQTTEventRelay>
    private let options: MQTTOptions
    private let phase = Mutex(Phase.stopped)
    private let generations = Atomic(0)
    private let connector = DispatchQueue(label: "Geotify.MQTTClient.connector")

    /// Creates a client for `options` (checked here: a bad option throws at once).
    /// `onEvent` is called on libmosquitto's network thread, one event at a time: keep
    /// it short, and do not call `start()` or `stop()` from it. Nothing connects until
    /// `start()`.
    public init(options: MQTTOptions, onEvent: @escaping @Sendable (MQTTEvent) -> Void) throws(MQTTError) {
        try MosquittoLibrary.ensureInitialised()
        try options.validate()
        let relay = Unmanaged.passRetained(MQTTEventRelay(protocolVersion: options.protocolVersion, onEvent: onEvent))
        let id: String? = options.clientID.isEmpty ? nil : options.clientID
        guard let handle = mosquitto_new(id, options.cleanSession, relay.toOpaque()) else {
            relay.release()
            let reason = errno == ENOMEM ? "out of memory" : "libmosquitto rejected the client id or session setting"
            throw MQTTError(operation: "mosquitto_new", code: MOSQ_ERR_NOMEM.rawValue, message: reason)
        }
        self.handle = handle
        self.relay = relay
        self.options = options
        MQTTEventRelay.install(on: handle)
    }

    /// Applies the options and starts connecting in the background. Returns at once:
    /// `.connected` or `.connectionRefused` follows. A broker that does not answer yet
    /// (nothing listening, host not resolvable) is not an error: the client keeps
    /// retrying with a delay doubling from `reconnectDelayMin` up to `reconnectDelayMax`
    /// seconds, and reconnects likewise (libmosquitto's own backoff) after a lost
    /// connection. Throws for options libmosquitto refuses (unreadable CA file, ...), a
    /// first connection failing in TLS set-up, or if the client is already started.
    public func start() throws(MQTTError) {
        guard !relay.takeUnretainedValue().isCallingBack else {
            throw .invalid("start", "start() cannot be called from inside the event callback")
        }
        try phase.withLock { (phase: inout Phase) throws(MQTTError) in
            guard case .stopped = phase else {
                throw .invalid("start", "the client is already started")
            }
            try applyOptions()
            let code = mosquitto_connect_async(handle, options.host, Int32(options.port), Int32(options.keepAlive))
            if code == MOSQ_ERR_SUCCESS.rawValue {
                try MQTTError.check("mosquitto_loop_start", mosquitto_loop_start(handle))
                phase = .running
            } else if Self.isUnreachable(code) {
                let generation = generations.add(1, ordering: .relaxed).newValue
                phase = .connecting(generation: generation)
                scheduleConnect(generation: generation, attempt: 0)
            } else {
                throw .mosquitto("connect to \(options.host):\(options.port)", code)
            }
        }
    }

    /// Subscribes to `filter` (wildcards + and # allowed) at QoS 0, 1 or 2 and returns
    /// the message id the matching `.subscribed` event will carry. Needs a connection
    /// (else `MOSQ_ERR_NO_CONN`, 4): subscribe on `.connected` (with a persistent
    /// session, `sessionPresent` says whether the broker still has the subscriptions).
    @discardableResult
    public func subscribe(_ filter: String, qos: Int) throws(MQTTError) -> Int32 {
        try MQTTTopic.checkFilter(filter, operation: "subscribe")
        guard (0...2).contains(qos) else {
            throw .invalid("subscribe", "QoS \(qos) is not 0, 1 or 2")
        }
        var messageID: Int32 = 0
        try MQTTError.check("subscribe to \(filter)", mosquitto_subscribe(handle, &messageID, filter, Int32(qos)))
        return messageID
    }

    /// Publishes `payload` to `topic` and returns the message id the matching
    /// `.published` event will carry. Needs a connection: without one it throws
    /// `MOSQ_ERR_NO_CONN` (4) whatever the QoS, since libmosquitto 2.0.11 queues nothing
    /// while it has no socket; keep the message and publish it after `.connected`.
    /// `correlationData` and `responseTopic` are sent as MQTT v5 properties with `.v5`,
    /// and ignored on v3.1.1, which has no properties.
    @discardableResult
    public func publish(
        topic: String,
        payload: [UInt8],
        qos: Int,
        retain: Bool,
        correlationData: [UInt8]? = nil,
        responseTopic: String? = nil
    ) throws(MQTTError) -> Int32 {
        let operation = "publish to \(topic)"
        try MQTTTopic.checkName(topic, operation: operation)
        guard (0...2).contains(qos) else {
            throw .invalid(operation, "QoS \(qos) is not 0, 1 or 2")
        }
        guard payload.count <= Self.maximumPayload else {
            throw .invalid(operation, "the payload is \(payload.count) bytes; MQTT allows \(Self.maximumPayload)")
        }
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if options.protocolVersion == .v5 {
            try addProperties(to: &properties, correlationData: correlationData, responseTopic: responseTopic)
        }
        var messageID: Int32 = 0
        let code = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(
                handle, &messageID, topic, Int32(bytes.count), bytes.baseAddress, Int32(qos), retain, properties
            )
        }
        try MQTTError.check(operation, code)
        return messageID
    }

    /// Disconnects cleanly (a DISCONNECT packet, so the broker does not publish the will)
    /// and stops the network thread, waiting for it. Does nothing if not started; safe
    /// from any thread. Called from inside `onEvent` it can only disconnect: the thread
    /// then ends by itself and the next `stop()` or the client's release joins it.
    public func stop() {
        let relay = relay.takeUnretainedValue()
        guard !relay.isCallingBack else {
            mosquitto_disconnect(handle)
            return
        }
        phase.withLock { phase in
            if case .running = phase {
                mosquitto_disconnect(handle)
                mosquitto_loop_stop(handle, false)
            }
            phase = .stopped
        }
        relay.markDisconnected()
    }

    /// Whether the broker has accepted the connection and it has not ended since.
    public var isConnected: Bool {
        relay.takeUnretainedValue().isConnected
    }

    /// Ends the TCP connection under libmosquitto without a DISCONNECT packet, as a
    /// crash or a network failure would, so the broker publishes the will. The network
    /// thread then sees the connection lost and reconnects. Only the will tests need this.
    func dropConnectionUncleanly() {
        let descriptor = mosquitto_socket(handle)
        if descriptor >= 0 {
            shutdown(descriptor, Int32(SHUT_RDWR))
        }
    }

    /// Stops the client and destroys the libmosquitto handle, then releases the relay,
    /// which no callback can reach any more. If the last reference goes away inside
    /// `onEvent`, on the network thread, the join and destruction move to another thread.
    deinit {
        let teardown = Teardown(handle: handle, relay: relay)
        let wasRunning = phase.withLock { phase in
            defer { phase = .stopped }
            if case .running = phase { return true }
            return false
        }
        guard wasRunning else {
            teardown.destroy()
            return
        }
        mosquitto_disconnect(handle)
        if relay.takeUnretainedValue().isCallingBack {
            DispatchQueue.global().async { teardown.joinAndDestroy() }
        } else {
            teardown.joinAndDestroy()
        }
    }

    /// Whether a connect attempt failed for want of a reachable broker (refused,
    /// unreachable, name not resolvable), so trying again later may work.
    private static func isUnreachable(_ code: Int32) -> Bool {
        code == MOSQ_ERR_ERRNO.rawValue || code == MOSQ_ERR_EAI.rawValue
    }

    /// Tries the first connection again after the backoff delay for `attempt`, unless
    /// the client was stopped (or stopped and started again) meanwhile.
    private func scheduleConnect(generation: Int, attempt: Int) {
        let delay = min(
            Double(options.reconnectDelayMin) * pow(2, Double(min(attempt, 30))),
            Double(options.reconnectDelayMax)
        )
        connector.asyncAfter(deadline: .now() + delay) { [weak self] in
            self?.retryConnect(generation: generation, attempt: attempt)
        }
    }

    private func retryConnect(generation: Int, attempt: Int) {
        let failure: Int32? = phase.withLock { phase in
            guard case .connecting(generation) = phase else { return nil }
            // The host, port and keep-alive are those given to mosquitto_connect_async.
            var code = mosquitto_reconnect_async(handle)
            if code == MOSQ_ERR_SUCCESS.rawValue {
                code = mosquitto_loop_start(handle)
                if code == MOSQ_ERR_SUCCESS.rawValue {
                    phase = .running
                    return nil
                }
            }
            // Every failure is retried, as libmosquitto's own reconnect loop does.
            scheduleConnect(generation: generation, attempt: attempt + 1)
            return code
        }
        // A broker that is simply not there yet is not news; anything else (a TLS
        // failure, say) is reported, as libmosquitto reports a failed connection.
        if let failure, !Self.isUnreachable(failure) {
            relay.takeUnretainedValue().reportFailedAttempt(code: failure)
        }
    }

    /// Where Debian and most Linux systems keep their trusted CA certificates.
    private static let systemCADirectory = "/etc/ssl/certs"

    /// The largest payload MQTT can carry (its remaining-length limit).
    private static let maximumPayload = 268_435_455

    private func applyOptions() throws(MQTTError) {
        let version = options.protocolVersion == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311
        try MQTTError.check(
            "set the protocol version", mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, version)
        )
        try MQTTError.check(
            "set the reconnect delay",
            mosquitto_reconnect_delay_set(
                handle, UInt32(options.reconnectDelayMin), UInt32(options.reconnectDelayMax), true
            )
        )
        if options.username != nil {
            try MQTTError.check(
                "set the username and password", mosquitto_username_pw_set(handle, options.username, options.password)
            )
        }
        if let will = options.will {
            let code = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set(
                    handle, will.topic, Int32(bytes.count), bytes.baseAddress, Int32(will.qos), will.retain
                )
            }
            try MQTTError.check("set the will", code)
        }
        if let tls = options.tls {
            try apply(tls)
        }
    }

    private func apply(_ tls: MQTTTLS) throws(MQTTError) {
        var caPath = tls.caPath
        if tls.caFile == nil, tls.caPath == nil {
            try MQTTError.check(
                "use the system's CA certificates", mosquitto_int_option(handle, MOSQ_OPT_TLS_USE_OS_CERTS, 1)
            )
            // libmosquitto 2.0.11 honours MOSQ_OPT_TLS_USE_OS_CERTS alone on the first
            // connection only: every reconnection then fails ("MOSQ_OPT_SSL_CTX_WITH_DEFAULTS
            // used without specifying cafile, capath or psk"). Naming the usual system CA
            // directory as well keeps reconnection working (a missing one is harmless).
            caPath = Self.systemCADirectory
        }
        let code = mosquitto_tls_set(handle, tls.caFile, caPath, tls.certFile, tls.keyFile, nil)
        guard code == MOSQ_ERR_SUCCESS.rawValue else {
            let files = [tls.caFile, tls.caPath, tls.certFile, tls.keyFile].compactMap { $0 }
            let reason = String(cString: mosquitto_strerror(code))
            let hint = "check that these files exist and are readable: \(files.joined(separator: ", "))"
            throw MQTTError(operation: "set up TLS", code: code, message: "\(reason) (\(hint))")
        }
        if tls.insecure {
            try MQTTError.check("turn off host name checks", mosquitto_tls_insecure_set(handle, true))
            try MQTTError.check("turn off certificate checks", mosquitto_tls_opts_set(handle, 0, nil, nil))
        }
    }

    private func addProperties(
        to properties: inout OpaquePointer?,
        correlationData: [UInt8]?,
        responseTopic: String?
    ) throws(MQTTError) {
        if let correlationData {
            guard correlationData.count <= Int(UInt16.max) else {
                throw .invalid("publish", "correlation data is \(correlationData.count) bytes; MQTT allows 65535")
            }
            let code = correlationData.withUnsafeBytes { bytes in
                mosquitto_property_add_binary(
                    &properties,
                    MQTTEventRelay.propertyID(MQTT_PROP_CORRELATION_DATA),
                    bytes.baseAddress,
                    UInt16(bytes.count)
                )
            }
            try MQTTError.check("add correlation data", code)
        }
        if let responseTopic {
            try MQTTTopic.checkName(responseTopic, operation: "add a response topic")
            try MQTTError.check(
                "add a response topic",
                mosquitto_property_add_string(
                    &properties, MQTTEventRelay.propertyID(MQTT_PROP_RESPONSE_TOPIC), responseTopic
                )
            )
        }
    }
}

/// The end of a client's life: join the network thread, destroy the handle, then release
/// the relay. A value of its own so it can move to another thread when the client is
/// released on the network thread; the pointers are used by one thread only from then on.
private struct Teardown: @unchecked Sendable {
    let handle: OpaquePointer
    let relay: Unmanaged<MQTTEventRelay>

    /// Waits for the network thread to end (it was told to disconnect), then destroys.
    func joinAndDestroy() {
        mosquitto_loop_stop(handle, false)
        destroy()
    }

    /// Destroys the handle (no network thread runs) and releases the relay.
    func destroy() {
        mosquitto_destroy(handle)
        relay.release()
    }
}
