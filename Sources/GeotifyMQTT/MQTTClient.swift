import CBufferedSocket
import CMosquitto
import Dispatch
import GeotifyTime
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A small MQTT client over libmosquitto: it connects in the background, reconnects by
/// itself after every failure with a capped exponential backoff and jitter, and reports
/// what happens as `MQTTEvent`s, each change of the connection's state once rather than
/// once per retry. It exists so the rest of Geotify never touches the C API.
///
/// A `ConnectionSupervisor` runs the network loop on threads of its own instead of
/// libmosquitto's `mosquitto_loop_start` thread, which can end silently for good (see
/// there), so the client never sits connected to nothing.
///
/// Thread safety (why `@unchecked Sendable` is sound):
/// - `handle` and `relay` are set once in `init` and only released in `deinit`.
/// - `publish`, `subscribe` and `mosquitto_disconnect` may be called from any thread
///   while a network thread runs: libmosquitto guards its queues and socket state with
///   its own mutexes.
/// - Applying options, the first connect, and starting and joining the supervisor
///   happen with the `phase` mutex held: in `start()`, `stop()` and `deinit`. `onEvent`
///   is never called with that mutex held. Inside a callback, `start()` refuses and
///   `stop()` only asks the supervisor to stop (through `supervisor`, whose mutex is
///   never held for long), because joining the network thread from itself would deadlock.
/// - State the callbacks change (connected or not) lives in `MQTTEventRelay` behind its
///   own mutex, which is never held while `onEvent` runs.
package final class MQTTClient: @unchecked Sendable {
    private let handle: OpaquePointer
    private let relay: Unmanaged<MQTTEventRelay>
    private let options: MQTTOptions
    private let scheduler: any Scheduler
    /// Asked before a burst waits for more (`BurstPacing`).
    private let hurry: (@Sendable () -> Bool)?
    /// The supervisor of the running client, nil while stopped; held during start and
    /// stop (including the join).
    private let phase = Mutex<ConnectionSupervisor?>(nil)
    /// The same supervisor, for `stop()` inside a callback, which must not wait for
    /// `phase`.
    private let supervisor = Mutex<ConnectionSupervisor?>(nil)

    /// Creates a client for `options` (checked here: a bad option throws at once).
    /// `onEvent` is called on the client's network thread, one event at a time: keep it
    /// short (copy, enqueue), and do not call `start()` from it; `stop()` there only
    /// asks for the stop. Nothing connects until `start()`. Reconnect delays are timed by
    /// `scheduler` (the system's clock unless a test moves one by hand).
    package convenience init(options: MQTTOptions, onEvent: @escaping @Sendable (consuming MQTTEvent) -> Void) throws(MQTTError) {
        try self.init(options: options, scheduler: SystemScheduler(), onEvent: onEvent)
    }

    /// A client whose reconnect delays are timed by `scheduler` (see the other `init`).
    /// While messages arrive densely, the network loop waits a little before it reports
    /// the end of a burst, so that bursts end at most once a millisecond
    /// (`BurstPacing`), unless `hurry` says the owner needs each burst's end at once.
    package init(
        options: MQTTOptions, scheduler: any Scheduler, hurry: (@Sendable () -> Bool)? = nil,
        onEvent: @escaping @Sendable (consuming MQTTEvent) -> Void
    ) throws(MQTTError) {
        try MosquittoLibrary.ensureInitialised()
        try options.validate()
        let relay = Unmanaged.passRetained(MQTTEventRelay(
            protocolVersion: options.protocolVersion, clientID: options.clientID,
            shortConnection: options.reconnectDelayMax, onEvent: onEvent))
        let id: String? = options.clientID.isEmpty ? nil : options.clientID
        // Without the wake-up socket pair the network loop never reads (UnreadWakeups.h):
        // one failed system call fewer for every packet queued.
        geotify_unread_wakeups_refuse(1)
        let made = mosquitto_new(id, options.cleanSession, relay.toOpaque())
        geotify_unread_wakeups_refuse(0)
        guard let handle = made else {
            relay.release()
            let reason = errno == ENOMEM ? "out of memory" : "libmosquitto rejected the client id or session setting"
            throw MQTTError(operation: "mosquitto_new", code: MOSQ_ERR_NOMEM.rawValue, message: reason)
        }
        self.handle = handle
        self.relay = relay
        self.options = options
        self.scheduler = scheduler
        self.hurry = hurry
        MQTTEventRelay.install(on: handle)
    }

    /// Applies the options and starts connecting in the background. Returns at once:
    /// `.connected` or `.connectionRefused` follows. Whatever ends a connection or an
    /// attempt afterwards (a broker that is not there yet or restarts, a lost network, a
    /// refusal, a TLS or protocol error) is reported and retried: the delay's ceiling
    /// doubles from `reconnectDelayMin` up to `reconnectDelayMax` seconds and each delay
    /// is shortened by a random share of up to half (`ReconnectBackoff`). Throws for
    /// options libmosquitto refuses (unreadable CA file, ...), a first connection failing
    /// in TLS set-up, or if the client is already started.
    package func start() throws(MQTTError) {
        let relay = relay.takeUnretainedValue()
        guard !relay.isCallingBack else {
            throw .invalid("start", "start() cannot be called from inside the event callback")
        }
        try phase.withLock { (phase: inout ConnectionSupervisor?) throws(MQTTError) in
            guard phase == nil else {
                throw .invalid("start", "the client is already started")
            }
            try applyOptions()
            // Out of threaded mode (which the supervisor of an earlier start() left on):
            // in that mode libmosquitto 2.0.11 defers even a refused connection or a
            // failing TLS set-up to the network loop, and this call could not report them.
            mosquitto_threaded_set(handle, false)
            relay.beginAttempt()
            let code = mosquitto_connect_async(handle, options.host, Int32(options.port), Int32(options.keepAlive))
            let first: ConnectionSupervisor.Start
            if code == MOSQ_ERR_SUCCESS.rawValue {
                first = .connecting
            } else if Self.isUnreachable(code) {
                first = .failed(code: code, reason: MQTTEventRelay.reason(disconnect: code))
            } else {
                var error = MQTTError.mosquitto("connect to \(options.host):\(options.port)", code)
                if let detail = relay.lastLoggedError {
                    error.message += " (\(detail))"
                }
                throw error
            }
            let supervisor = ConnectionSupervisor(
                handle: handle, relay: relay,
                backoff: Self.backoff(options),
                scheduler: scheduler, hurry: hurry,
                // Over TLS out of the plaintext's buffer (`geotify_buffered_socket_attach_tls`).
                wholePublishes: options.protocolVersion,
                // An MQTT 5 broker is told the largest packet instead (`setConnectProperties`).
                cutPublishesOver: options.protocolVersion == .v311 ? options.maximumIncomingPacketBytes : nil)
            guard supervisor.begin(first) else {
                throw MQTTError(
                    operation: "start", code: MOSQ_ERR_NOMEM.rawValue,
                    message: "the system could not start a network thread")
            }
            phase = supervisor
            self.supervisor.withLock { $0 = supervisor }
        }
    }

    /// The reconnect delays for `options`: from `reconnectDelayMin` doubling up to
    /// `reconnectDelayMax` seconds, each shortened by a random share of up to half, so
    /// that clients cut off together do not come back in the same instant.
    static func backoff(_ options: MQTTOptions) -> ReconnectBackoff {
        ReconnectBackoff(minimum: options.reconnectDelayMin, maximum: options.reconnectDelayMax, jitter: 0.5)
    }

    /// Subscribes to `filter` (wildcards + and # allowed) at QoS 0, 1 or 2 and returns
    /// the message id the matching `.subscribed` event will carry. Needs a connection
    /// (else `MOSQ_ERR_NO_CONN`, 4): subscribe on `.connected` (with a persistent
    /// session, `sessionPresent` says whether the broker still has the subscriptions).
    @discardableResult
    package func subscribe(_ filter: String, qos: Int) throws(MQTTError) -> Int32 {
        try MQTTTopic.checkFilter(filter, operation: "subscribe")
        guard (0...2).contains(qos) else {
            throw .invalid("subscribe", "QoS \(qos) is not 0, 1 or 2")
        }
        var messageID: Int32 = 0
        try MQTTError.check("subscribe to \(filter)", mosquitto_subscribe(handle, &messageID, filter, Int32(qos)))
        wakeUnlessCallingBack()
        return messageID
    }

    /// Ends the subscription to `filter` (as it was subscribed) and returns the message id
    /// the matching `.unsubscribed` event will carry. Needs a connection, as `subscribe`
    /// does; with a persistent session a subscription not ended stays.
    @discardableResult
    package func unsubscribe(_ filter: String) throws(MQTTError) -> Int32 {
        try MQTTTopic.checkFilter(filter, operation: "unsubscribe")
        var messageID: Int32 = 0
        try MQTTError.check("unsubscribe from \(filter)", mosquitto_unsubscribe(handle, &messageID, filter))
        wakeUnlessCallingBack()
        return messageID
    }

    /// Publishes `payload` to `topic` and returns the message id the matching
    /// `.published` event will carry. Needs a connection: without one it throws
    /// `MOSQ_ERR_NO_CONN` (4) whatever the QoS. A QoS 0 message is then gone: keep it and
    /// publish it after `.connected`. A QoS 1 or 2 message is not: libmosquitto 2.0.11
    /// queues it before it tries to write it, and sends it once connected again, so the
    /// error carries its id (`keptMessageID`, also when the connection is lost during the
    /// write) and it must not be published again. One window breaks that: libmosquitto
    /// marks the messages it holds to be sent again when it begins to reconnect, before
    /// it has a socket, and on CONNACK sends only those; a QoS 1 or 2 message published
    /// between the two is held as already sent and goes out only after a later
    /// reconnection. So publish QoS 1 and 2 only between `.connected` and
    /// `.disconnected`, as `Publisher` does (docs/reliability.md); this method does not
    /// check it, as a check here could not be atomic with the network thread's
    /// reconnection anyway.
    /// `correlationData` and `responseTopic` are sent as MQTT v5 properties with `.v5`,
    /// and ignored on v3.1.1, which has no properties.
    @discardableResult
    package func publish(
        topic: String,
        payload: [UInt8],
        qos: Int,
        retain: Bool,
        correlationData: [UInt8]? = nil,
        responseTopic: String? = nil
    ) throws(MQTTError) -> Int32 {
        // Made only for an error: a publish is on the hot path of every notification.
        func operation() -> String { "publish to \(topic)" }
        try MQTTTopic.checkName(topic, operation: operation())
        guard (0...2).contains(qos) else {
            throw .invalid(operation(), "QoS \(qos) is not 0, 1 or 2")
        }
        guard payload.count <= Self.maximumPayload else {
            throw .invalid(operation(), "the payload is \(payload.count) bytes; MQTT allows \(Self.maximumPayload)")
        }
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if options.protocolVersion == .v5 {
            try addProperties(to: &properties, correlationData: correlationData, responseTopic: responseTopic)
        }
        var messageID: Int32 = 0
        // The topic's own bytes, lent (see `MQTTTopic.checkName`): libmosquitto copies them.
        let code = topic.withCString { topic in
            payload.withUnsafeBytes { bytes in
                mosquitto_publish_v5(
                    handle, &messageID, topic, Int32(bytes.count), bytes.baseAddress, Int32(qos), retain, properties
                )
            }
        }
        if qos > 0 && MQTTError.leavesMessageQueued(code) {
            var error = MQTTError.mosquitto(operation(), code)
            error.keptMessageID = messageID
            throw error
        }
        try MQTTError.check(operation(), code)
        wakeUnlessCallingBack()
        return messageID
    }

    /// Disconnects cleanly (a DISCONNECT packet, so the broker does not publish the will),
    /// stops reconnecting and waits for the network thread to end (a couple of seconds
    /// at most when the broker does not answer; the connection then ends without
    /// DISCONNECT, reported as `.disconnected` with `MOSQ_ERR_TIMEOUT`). Does nothing if
    /// not started; safe from any thread. Called from inside `onEvent` it can only ask for
    /// all that: the thread then ends by itself and the next `stop()` or the client's
    /// release joins it.
    package func stop() {
        let relay = relay.takeUnretainedValue()
        guard !relay.isCallingBack else {
            supervisor.withLock { $0 }?.requestStop()
            return
        }
        phase.withLock { phase in
            if let running = phase {
                running.requestStop()
                running.join()
            }
            phase = nil
            supervisor.withLock { $0 = nil }
        }
        relay.markDisconnected()
    }

    /// Whether the broker has accepted the connection and it has not ended since.
    package var isConnected: Bool {
        relay.takeUnretainedValue().isConnected
    }

    /// The Maximum Packet Size an MQTT 5 broker announced when it accepted the last
    /// connection, nil when it announced none (always, over MQTT 3.1.1). libmosquitto
    /// refuses to publish a larger packet (`MQTTError.isOversize`).
    package var brokerMaximumPacketSize: Int? {
        relay.takeUnretainedValue().brokerMaximumPacketSize
    }

    /// How many QoS 0 messages the network loop read out of its read buffer itself, not
    /// through libmosquitto (`ConnectionSupervisor.takeWholePublishes`), since the client
    /// was made: for tests and benchmarks.
    package var messagesReadWhole: Int {
        relay.takeUnretainedValue().messagesReadWhole
    }

    /// Ends the TCP connection under libmosquitto without a DISCONNECT packet, as a
    /// crash or a network failure would, so the broker publishes the will. The network
    /// thread then sees the connection lost and reconnects, unless `stop()` follows: a
    /// stop that could not say goodbye itself (the bridge's `offline` unacknowledged)
    /// leaves it to the will this way.
    package func dropConnectionUncleanly() {
        let descriptor = mosquitto_socket(handle)
        if descriptor >= 0 {
            shutdown(descriptor, Int32(SHUT_RDWR))
        }
    }

    /// Stops the client and destroys the libmosquitto handle, then releases the relay,
    /// which no callback can reach any more. If the last reference goes away inside
    /// `onEvent`, on the network thread, the join and destruction move to another thread.
    deinit {
        let running = phase.withLock { phase in
            defer { phase = nil }
            return phase
        }
        supervisor.withLock { $0 = nil }
        let teardown = Teardown(handle: handle, relay: relay, supervisor: running)
        guard let running else {
            teardown.destroy()
            return
        }
        running.requestStop()
        if relay.takeUnretainedValue().isCallingBack {
            DispatchQueue.global().async { teardown.joinAndDestroy() }
        } else {
            teardown.joinAndDestroy()
        }
    }

    /// Wakes the network loop to write what was just queued, unless this is the network
    /// thread itself (inside a callback), which writes it at the end of its turn anyway.
    private func wakeUnlessCallingBack() {
        guard !relay.takeUnretainedValue().isCallingBack else { return }
        supervisor.withLock { $0 }?.wake()
    }

    /// Whether a connect attempt failed for want of a reachable broker (refused,
    /// unreachable, name not resolvable), so trying again later may work.
    private static func isUnreachable(_ code: Int32) -> Bool {
        code == MOSQ_ERR_ERRNO.rawValue || code == MOSQ_ERR_EAI.rawValue
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
        // Without it, TCP holds a small packet (a notification) while the one before it
        // (the acknowledgement of a position) is unacknowledged: tens of milliseconds
        // added to every notification.
        try MQTTError.check("turn off Nagle's algorithm", mosquitto_int_option(handle, MOSQ_OPT_TCP_NODELAY, 1))
        let inFlight = Int32(min(max(options.maximumInFlight, 1), 65_535))
        try MQTTError.check(
            "set the messages in flight",
            options.protocolVersion == .v5
                ? mosquitto_int_option(handle, MOSQ_OPT_SEND_MAXIMUM, inFlight)
                : mosquitto_max_inflight_messages_set(handle, UInt32(inFlight)))
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
        if options.protocolVersion == .v5 && (!options.cleanSession || options.maximumIncomingPacketBytes != nil) {
            try setConnectProperties()
        }
    }

    /// Gives an MQTT 5 broker, in every CONNECT, what this client asks of it:
    ///
    /// - to keep this client's session (its subscriptions, and the QoS 1 messages
    ///   published to them meanwhile) when the connection ends, as `cleanSession` false
    ///   does over MQTT 3.1.1: MQTT 5 ends a session with its connection unless CONNECT
    ///   carries a Session Expiry Interval, and without it every position published while
    ///   the bridge restarted or crashed was lost. The interval given, 0xFFFFFFFF, never
    ///   expires (the broker's `persistent_client_expiration` still applies);
    /// - not to send it a packet larger than `maximumIncomingPacketBytes` (the Maximum
    ///   Packet Size property): a client allowed to publish to a topic the bridge reads
    ///   could otherwise make it take a message of up to 256 MiB, held twice over (as
    ///   libmosquitto reads it, and copied) before it could be refused.
    ///
    /// libmosquitto 2.0 sends CONNECT properties only when given to the blocking
    /// `mosquitto_connect_bind_v5`, which keeps them for every later connection
    /// (`mosq->connect_properties`, read by each reconnection). It stores them before it
    /// checks its host and port (lib/connect.c), so called with port -1 it keeps them and
    /// answers `MOSQ_ERR_INVAL` without connecting; `mosquitto_connect_async` then sends
    /// them. Any other answer means that order changed, and is an error here rather than
    /// a session silently lost (`SessionQueueBridgeTests` shows the session kept,
    /// `IncomingPacketLimitBridgeTests` the limit).
    private func setConnectProperties() throws(MQTTError) {
        let operation = "set the CONNECT properties"
        var properties: OpaquePointer?
        defer { mosquitto_property_free_all(&properties) }
        if !options.cleanSession {
            try MQTTError.check(
                "ask the broker to keep the session",
                mosquitto_property_add_int32(&properties, MQTTEventRelay.propertyID(MQTT_PROP_SESSION_EXPIRY_INTERVAL), UInt32.max))
        }
        if let bytes = options.maximumIncomingPacketBytes {
            try MQTTError.check(
                "tell the broker the largest packet this client takes",
                mosquitto_property_add_int32(&properties, MQTTEventRelay.propertyID(MQTT_PROP_MAXIMUM_PACKET_SIZE), UInt32(bytes)))
        }
        let code = mosquitto_connect_bind_v5(handle, options.host, -1, Int32(options.keepAlive), nil, properties)
        guard code == MOSQ_ERR_INVAL.rawValue else {
            throw MQTTError(
                operation: operation, code: code,
                message: "this libmosquitto does not keep CONNECT properties as 2.0.11 does (answered \(code), expected \(MOSQ_ERR_INVAL.rawValue))")
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
    let supervisor: ConnectionSupervisor?

    /// Waits for the network thread to end (it was told to stop), then destroys.
    func joinAndDestroy() {
        supervisor?.join()
        destroy()
    }

    /// Destroys the handle (no network thread runs) and releases the relay.
    func destroy() {
        mosquitto_destroy(handle)
        relay.release()
    }
}
