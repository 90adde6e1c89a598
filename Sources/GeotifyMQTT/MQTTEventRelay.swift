import CBufferedSocket
import CMosquitto
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The object libmosquitto's callbacks reach through their `obj` pointer. It turns each
/// callback into an `MQTTEvent` for the client's `onEvent` closure and tracks the state
/// the callbacks reveal (connected or not, which thread is inside a callback).
///
/// It also reports each change of the connection's fortunes once, not once per retry:
/// the `ConnectionSupervisor` brackets every connection attempt with `beginAttempt()`
/// and `endAttempt(code:reason:)`, and an attempt that fails exactly as the previous
/// one did (the same refusal, the same error and reason) is not reported again until a
/// connection has been accepted in between. A connection that the broker had accepted
/// and that then ends is always reported.
///
/// It is separate from `MQTTClient` so the client can be released while the network
/// thread still runs: the client holds one retained reference (handed to libmosquitto
/// as `obj`) and gives it up only after the network thread has ended and
/// `mosquitto_destroy` has run, when no callback can run any more.
///
/// Callbacks run on the client's network thread (inside `mosquitto_loop`), one at a
/// time, and the memory they are handed is freed when they return: everything is
/// copied into Swift values before `onEvent` sees it.
final class MQTTEventRelay: Sendable {
    private struct State {
        var isConnected = false
        var callbackThread: pthread_t?
        /// When the broker accepted the current attempt's connection, if it has.
        var connectedAt: ContinuousClock.Instant?
        /// How the current attempt failed, once it has.
        var failure: Failure?
        /// Whether the end of the current attempt has been handled (reported or not).
        var ended = false
        /// How the last attempt failed, while no connection has been accepted since:
        /// the same failure again is not reported.
        var previousFailure: Failure?
        /// What libmosquitto last logged as an error during the current attempt (for a
        /// TLS failure, OpenSSL's reason, which its error code alone does not give).
        var lastLoggedError: String?
        /// Whether messages or acknowledgements were delivered since the last `.caughtUp`.
        var messagesSinceCaughtUp = false
        /// A `.connected` (its session-present flag) not yet delivered. libmosquitto
        /// calls back on the CONNACK before it resends the QoS 1 messages it holds
        /// (`message__retry_check` follows the callback), so what the owner published on
        /// hearing of the connection would go out ahead of them: an older notification
        /// after a newer one. The event waits for the next event or the burst's end, by
        /// when the resends are queued.
        var pendingConnected: Bool?
        /// How accepted connections have been ending, to tell a session taken over.
        var takeover: SessionTakeover
        /// The Maximum Packet Size an MQTT 5 broker announced in its CONNACK of the
        /// current connection, if it did: libmosquitto refuses to send a larger packet.
        var brokerMaximumPacketSize: Int?
        /// Whether this client asked to disconnect (`stopRequested()`): an end with code 0
        /// is then its own stop, else an MQTT v5 broker's DISCONNECT with reason 0.
        var stopRequested = false
    }

    /// How a connection attempt failed: refused by the broker, or ended before it
    /// answered. Two failures are the same when the code and the reason are.
    private struct Failure: Equatable {
        var refused: Bool
        var code: Int32
        var reason: String
    }

    private let onEvent: @Sendable (consuming MQTTEvent) -> Void
    private let protocolVersion: MQTTProtocolVersion
    private let clientID: String
    private let state: Mutex<State>
    /// Messages and acknowledgements delivered so far, counted on the network thread:
    /// how the loop tells how many packets one `mosquitto_loop_read` call read.
    private let packets = Atomic<Int>(0)
    /// How many of those messages the network loop read whole out of the read buffer
    /// itself (`beginWhole()`), not through libmosquitto.
    private let wholeMessages = Atomic<Int>(0)
    /// The topic and payload bytes of the messages delivered so far: how the loop tells
    /// how much a burst holds (`ConnectionSupervisor.burstBytes`).
    private let messageBytes = Atomic<Int>(0)

    /// A relay for a client with `clientID` speaking `protocolVersion`; a connection the
    /// broker closes within `shortConnection` seconds of accepting it counts towards a
    /// session taken over (see `SessionTakeover`).
    init(
        protocolVersion: MQTTProtocolVersion, clientID: String, shortConnection: Double,
        onEvent: @escaping @Sendable (consuming MQTTEvent) -> Void
    ) {
        self.protocolVersion = protocolVersion
        self.clientID = clientID
        self.onEvent = onEvent
        state = Mutex(State(takeover: SessionTakeover(shortConnection: shortConnection)))
    }

    /// Whether the broker accepted the connection and it has not ended since.
    var isConnected: Bool {
        state.withLock { $0.isConnected }
    }

    /// The Maximum Packet Size the broker announced when it accepted the last connection
    /// (MQTT 5), nil when it announced none.
    var brokerMaximumPacketSize: Int? {
        state.withLock { $0.brokerMaximumPacketSize }
    }

    /// Whether the calling thread is running one of this relay's callbacks right now.
    var isCallingBack: Bool {
        state.withLock { state in
            guard let thread = state.callbackThread else { return false }
            return pthread_equal(thread, pthread_self()) != 0
        }
    }

    /// Records that this client asked to disconnect, before it asks libmosquitto: a
    /// connection that ends with code 0 after this is its stop.
    func stopRequested() {
        state.withLock { $0.stopRequested = true }
    }

    /// Records that the connection is gone, for when `stop()` ended it without the
    /// disconnect callback having run (no connection to close).
    func markDisconnected() {
        state.withLock { $0.isConnected = false }
    }

    /// Installs the MQTT v5 callbacks (which libmosquitto also calls, with no
    /// properties, for v3.1.1 connections) on `handle`, whose `obj` is a relay.
    static func install(on handle: OpaquePointer) {
        listenToLog(on: handle)
        mosquitto_connect_v5_callback_set(handle) { handle, obj, code, flags, properties in
            // Once connected, libmosquitto's log has nothing more to tell (its errors are
            // the connection's end, reported anyway) and would format a line for every
            // packet: stop listening until the next attempt.
            if code == 0, let handle { mosquitto_log_callback_set(handle, nil) }
            var limit: UInt32 = 0
            let announced = mosquitto_property_read_int32(properties, MQTTEventRelay.propertyID(MQTT_PROP_MAXIMUM_PACKET_SIZE), &limit, false) != nil
            MQTTEventRelay.relay(obj)?.connected(code: code, flags: flags, maximumPacketSize: announced ? Int(limit) : nil)
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, obj, code, _ in
            // libmosquitto has closed the socket, on this thread, before it calls back.
            MQTTEventRelay.relay(obj)?.disconnected(code: code, dropped: geotify_buffered_socket_dropped())
        }
        mosquitto_message_v5_callback_set(handle) { _, obj, message, properties in
            guard let relay = MQTTEventRelay.relay(obj), let message else { return }
            let copied = MQTTEventRelay.copy(message.pointee, properties: properties)
            relay.messageBytes.add(copied.topic.utf8.count + copied.payload.count, ordering: .relaxed)
            relay.deliver(.message(copied), message: true)
        }
        mosquitto_publish_v5_callback_set(handle) { _, obj, messageID, reasonCode, _ in
            MQTTEventRelay.relay(obj)?.deliver(MQTTEventRelay.published(messageID: messageID, reasonCode: reasonCode), message: true)
        }
        mosquitto_subscribe_v5_callback_set(handle) { _, obj, messageID, count, granted, _ in
            guard let relay = MQTTEventRelay.relay(obj) else { return }
            let grantedQoS = (0..<Int(max(count, 0))).map { Int(granted?[$0] ?? 128) }
            relay.deliver(.subscribed(messageID: messageID, grantedQoS: grantedQoS))
        }
        mosquitto_unsubscribe_v5_callback_set(handle) { _, obj, messageID, _ in
            MQTTEventRelay.relay(obj)?.deliver(.unsubscribed(messageID: messageID))
        }
    }

    /// Keeps libmosquitto's last error line (for a TLS failure, OpenSSL's reason);
    /// installed for each connection attempt, removed once connected.
    static func listenToLog(on handle: OpaquePointer) {
        mosquitto_log_callback_set(handle) { _, obj, level, message in
            guard level == MOSQ_LOG_ERR, let message else { return }
            let text = String(cString: message)
            MQTTEventRelay.relay(obj)?.state.withLock { $0.lastLoggedError = text }
        }
    }

    private static func relay(_ obj: UnsafeMutableRawPointer?) -> MQTTEventRelay? {
        obj.map { Unmanaged<MQTTEventRelay>.fromOpaque($0).takeUnretainedValue() }
    }

    /// What libmosquitto last logged as an error since the attempt began, if anything.
    var lastLoggedError: String? {
        state.withLock { $0.lastLoggedError }
    }

    /// Starts tracking a new connection attempt; called before it connects.
    func beginAttempt() {
        state.withLock { state in
            state.connectedAt = nil
            state.failure = nil
            state.ended = false
            state.lastLoggedError = nil
        }
    }

    /// Ends the current attempt, after the network loop has stopped for it: reports its
    /// end as `.disconnected(code, reason)` unless a callback already did (or chose not
    /// to, as a repeat), and returns how long the broker had accepted the connection, in
    /// seconds, or nil if it never did. `reason` must be read where the failure happened.
    func endAttempt(code: Int32, reason: String) -> Double? {
        if !state.withLock({ $0.ended }) {
            ended(code: code, reason: reason)
        }
        return state.withLock { state in
            if let failure = state.failure {
                state.previousFailure = failure
            }
            return state.connectedAt.map { Self.seconds(ContinuousClock.now - $0) }
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    private func connected(code: Int32, flags: Int32, maximumPacketSize: Int?) {
        if code == 0 {
            state.withLock { state in
                state.brokerMaximumPacketSize = maximumPacketSize
                state.connectedAt = .now
                state.failure = nil
                state.previousFailure = nil
                state.isConnected = true
                // Delivered after libmosquitto's resends (see `State.pendingConnected`).
                state.pendingConnected = flags & 1 != 0
            }
        } else {
            let reason = switch protocolVersion {
            case .v311: String(cString: mosquitto_connack_string(code))
            case .v5: MQTTEvent.reason(of: Int(code))
            }
            let isNews = state.withLock { state in
                let failure = Failure(refused: true, code: code, reason: reason)
                state.failure = failure
                return failure != state.previousFailure
            }
            if isNews {
                deliver(.connectionRefused(code: Int(code), reason: reason), connected: false)
            } else {
                markDisconnected()
            }
        }
    }

    /// The connection ended with `code`, its close having dropped `dropped` bytes the
    /// kernel did not take (CBufferedSocket). libmosquitto says 0 for two ends: its own
    /// DISCONNECT written, and an MQTT v5 broker's DISCONNECT with reason 0 ("normal
    /// disconnection"). Unless this client asked to stop, it is the broker's, reported
    /// as the broker closing the connection (`SessionTakeover.closedByBroker`), which the
    /// owner logs and the takeover detector counts; as a stop it would pass unlogged.
    /// A stop is libmosquitto's word once it has written the DISCONNECT, into the read
    /// buffer's gathered bytes, and closed the socket; when the close then had to drop
    /// bytes, the DISCONNECT was among them, the broker never reads it and publishes the
    /// will: reported as a stop whose DISCONNECT could not be sent (`MOSQ_ERR_TIMEOUT`,
    /// as `ConnectionSupervisor` reports one that could not even be written), not as a
    /// clean end.
    private func disconnected(code: Int32, dropped: Int) {
        if code == 0 && !state.withLock({ $0.stopRequested }) {
            ended(code: SessionTakeover.closedByBroker, reason: Self.brokerDisconnected)
        } else if code == 0 && dropped > 0 {
            let (code, reason) = Self.disconnectNotSent("the connection closed before the broker took the last \(dropped) bytes written")
            ended(code: code, reason: reason)
        } else {
            ended(code: code, reason: Self.reason(disconnect: code))
        }
    }

    /// What libmosquitto's publish callback tells with `reasonCode`: a publish completed
    /// (0 for MQTT 3.1.1, an MQTT v5 success code below 0x80), or refused by the broker.
    static func published(messageID: Int32, reasonCode: Int32) -> MQTTEvent {
        guard reasonCode >= 0x80 else { return .published(messageID: messageID) }
        return .publishRefused(messageID: messageID, code: Int(reasonCode), reason: MQTTEvent.reason(of: Int(reasonCode)))
    }

    /// Why a connection ended that an MQTT v5 broker closed with a DISCONNECT of reason 0.
    static let brokerDisconnected = "the broker closed the connection (MQTT v5 DISCONNECT, reason 0: normal disconnection)"

    /// How a stop whose DISCONNECT never reached the broker ends, `why` saying what kept
    /// it: `MOSQ_ERR_TIMEOUT`, and a reason saying that the broker publishes the will. One
    /// wording for the two ways (`ConnectionSupervisor.endWithoutDisconnect`, a close that
    /// dropped it), which the bridge logs as a stop without a clean disconnect.
    static func disconnectNotSent(_ why: String) -> (code: Int32, reason: String) {
        (MOSQ_ERR_TIMEOUT.rawValue, "the DISCONNECT could not be sent (\(why)), so the broker publishes the will")
    }

    /// The current attempt's connection ended (or never came about) with `code`. Reported
    /// when it is news: a stop on request (0), the loss of an accepted connection, the
    /// end that follows a refusal that was reported, or a failure unlike the last one.
    /// A session taken over is reported with code `MQTTEvent.sessionTakenOver`.
    private func ended(code: Int32, reason: String) {
        var code = code
        var reason = reason
        let isNews = state.withLock { state in
            state.ended = true
            if code == MOSQ_ERR_TLS.rawValue, let detail = state.lastLoggedError {
                reason += " (\(detail))"
            }
            let connectedFor = state.connectedAt.map { Self.seconds(ContinuousClock.now - $0) }
            // Lost before any CONNACK, and not after a refusal: the broker took the TCP
            // connection and closed it without a word (`MQTTEvent.closedUnanswered`).
            if code == MOSQ_ERR_CONN_LOST.rawValue && connectedFor == nil && state.failure?.refused != true {
                reason = MQTTEvent.closedUnanswered
            }
            if code != 0 && state.takeover.ended(code: code, connectedFor: connectedFor) {
                reason = code == SessionTakeover.reasonCode
                    ? "session taken over: another client connected with client id \"\(clientID)\" and the broker closed this connection (MQTT v5 reason 0x8E)"
                    : "session taken over, most likely: the broker closed the connection right after accepting it, \(state.takeover.streak) times in a row, as it does when another client connects with the same client id \"\(clientID)\" (and, if its log says \"oversize packet\", when this client sends a packet larger than its max_packet_size)"
                code = SessionTakeover.reasonCode
            }
            if code == 0 || connectedFor != nil {
                return true
            }
            if let failure = state.failure, failure.refused {
                return failure != state.previousFailure
            }
            let failure = Failure(refused: false, code: code, reason: reason)
            state.failure = failure
            return failure != state.previousFailure
        }
        if isNews {
            deliver(.disconnected(code: Int(code), reason: reason), connected: false)
        } else {
            markDisconnected()
        }
    }

    /// Why a connection ended, for `code`: 0 on request, else a libmosquitto error
    /// (for `MOSQ_ERR_ERRNO`, the system's text for `errno`: call this at once, on the
    /// thread where the failure happened, before anything else can change `errno`) or a
    /// DISCONNECT reason code from an MQTT v5 broker.
    static func reason(disconnect code: Int32) -> String {
        if code == 0 {
            return "disconnected on request"
        }
        if code == MOSQ_ERR_ERRNO.rawValue {
            return String(cString: strerror(errno))
        }
        // libmosquitto's own error codes are all below 0x80, v5 reason codes above.
        if code >= 0x80 {
            return MQTTEvent.reason(of: Int(code))
        }
        return String(cString: mosquitto_strerror(code))
    }

    /// Says `.caughtUp` when messages were delivered since it was last said, after a
    /// `.connected` still waiting (`State.pendingConnected`); the network loop calls it
    /// each time it has handled what it read.
    func caughtUp() {
        let (connected, messages) = state.withLock { state in
            defer {
                state.pendingConnected = nil
                state.messagesSinceCaughtUp = false
            }
            return (state.pendingConnected, state.messagesSinceCaughtUp)
        }
        if let connected { deliver(.connected(sessionPresent: connected)) }
        if messages { deliver(.caughtUp) }
    }

    /// How many messages and acknowledgements have been delivered so far.
    var deliveredPackets: Int { packets.load(ordering: .relaxed) }

    /// The topic and payload bytes of the messages delivered so far.
    var deliveredBytes: Int { messageBytes.load(ordering: .relaxed) }

    /// Hands `event` to the owner, after a `.connected` still waiting
    /// (`State.pendingConnected`), noting this thread as the one calling back meanwhile.
    /// One lock before and one after, as every message and acknowledgement comes here.
    private func deliver(_ event: consuming MQTTEvent, connected: Bool? = nil, message: Bool = false) {
        beginCallback(connected: connected, message: message)
        if message { packets.add(1, ordering: .relaxed) }
        onEvent(event)
        endCallback()
    }

    /// Notes this thread as the one calling back (and the connection's new state, and
    /// that messages came, when so), then hands the owner a `.connected` still waiting.
    private func beginCallback(connected: Bool? = nil, message: Bool) {
        let pending = state.withLock { state -> Bool? in
            defer { state.pendingConnected = nil }
            state.callbackThread = pthread_self()
            if let connected {
                state.isConnected = connected
            }
            if message { state.messagesSinceCaughtUp = true }
            return state.pendingConnected
        }
        if let pending { onEvent(.connected(sessionPresent: pending)) }
    }

    /// Notes that this thread no longer calls back.
    private func endCallback() {
        state.withLock { $0.callbackThread = nil }
    }

    /// Begins handing the owner QoS 0 messages the network loop reads itself
    /// (`ConnectionSupervisor.takeWholePublishes`), as libmosquitto's callback would:
    /// `deliverWhole(_:)` for each, then `endWhole(_:bytes:)` with how many. The thread counts
    /// as calling back from the first to the last, with one lock before and one after
    /// rather than two for each message (a burst holds up to
    /// `ConnectionSupervisor.burstLimit`).
    func beginWhole() {
        beginCallback(message: true)
    }

    /// Hands the owner one message between `beginWhole()` and `endWhole(_:bytes:)`. Taken,
    /// not borrowed, so it moves on to the owner without a copy.
    func deliverWhole(_ message: __owned MQTTMessage) {
        onEvent(.message(message))
    }

    /// Ends what `beginWhole()` began, after `count` messages of `bytes` topic and payload
    /// bytes in all.
    func endWhole(_ count: Int, bytes: Int) {
        packets.add(count, ordering: .relaxed)
        messageBytes.add(bytes, ordering: .relaxed)
        wholeMessages.add(count, ordering: .relaxed)
        endCallback()
    }

    /// How many messages the network loop read whole itself so far.
    var messagesReadWhole: Int { wholeMessages.load(ordering: .relaxed) }

    /// Whether libmosquitto would take the topic of the whole QoS 0 PUBLISH packet
    /// `view` shows: UTF-8 by MQTT's rules, which also bar U+0000. A packet it would
    /// refuse is left for libmosquitto to read and refuse.
    static func acceptsTopic(_ view: geotify_publish_view) -> Bool {
        guard let topic = view.topic, view.topic_length <= 65_535 else { return false }
        return mosquitto_validate_utf8(UnsafeRawPointer(topic).assumingMemoryBound(to: CChar.self), Int32(view.topic_length))
            == MOSQ_ERR_SUCCESS.rawValue
    }

    /// The message of a whole QoS 0 PUBLISH packet in the read buffer whose topic
    /// `acceptsTopic`, copied out of the buffer.
    static func message(_ view: geotify_publish_view) -> MQTTMessage {
        let topic = UnsafeBufferPointer(start: view.topic, count: view.topic_length)
        let payload = view.payload_length > 0 ? Array(UnsafeBufferPointer(start: view.payload, count: view.payload_length)) : []
        return MQTTMessage(topic: String(decoding: topic, as: UTF8.self), payload: payload, qos: 0, retain: view.retain != 0)
    }

    /// Copies a message libmosquitto is about to free, with its Response Topic and
    /// Correlation Data properties (freeing the copies libmosquitto makes of them), and
    /// the payload bytes the read buffer left out of it.
    private static func copy(_ message: mosquitto_message, properties: OpaquePointer?) -> MQTTMessage {
        let topic = message.topic.map { String(cString: $0) } ?? ""
        var payload: [UInt8] = []
        if let bytes = message.payload, message.payloadlen > 0 {
            payload = Array(UnsafeRawBufferPointer(start: bytes, count: Int(message.payloadlen)))
        }
        var responseTopic: String?
        var text: UnsafeMutablePointer<CChar>?
        if mosquitto_property_read_string(properties, propertyID(MQTT_PROP_RESPONSE_TOPIC), &text, false) != nil,
           let text {
            responseTopic = String(cString: text)
            free(text)
        }
        var correlationData: [UInt8]?
        var data: UnsafeMutableRawPointer?
        var length: UInt16 = 0
        if mosquitto_property_read_binary(
            properties, propertyID(MQTT_PROP_CORRELATION_DATA), &data, &length, false
        ) != nil {
            correlationData = data.map { Array(UnsafeRawBufferPointer(start: $0, count: Int(length))) } ?? []
            free(data)
        }
        var copied = MQTTMessage(
            topic: topic,
            payload: payload,
            qos: Int(message.qos),
            retain: message.retain,
            responseTopic: responseTopic,
            correlationData: correlationData
        )
        // A packet larger than the client takes reached libmosquitto cut, just now.
        copied.payloadLeftOut = geotify_buffered_socket_take_cut()
        return copied
    }

    /// A property identifier as libmosquitto's functions take it.
    static func propertyID(_ property: mqtt5_property) -> Int32 {
        Int32(property.rawValue)
    }
}
