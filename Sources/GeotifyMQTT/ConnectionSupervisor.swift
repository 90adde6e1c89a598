import CBufferedSocket
import CMosquitto
import Dispatch
import GeotifyTime
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Keeps an `MQTTClient` connected from `start()` to `stop()`: runs libmosquitto's
/// network loop (`mosquitto_loop`) on a thread of its own for each connection, notices
/// when that thread ends, whatever ended it, and starts the next one after a capped
/// exponential backoff with jitter (`ReconnectBackoff`).
///
/// Why not libmosquitto's own network thread (`mosquitto_loop_start`): that thread ends
/// for good, and silently, on errors it deems fatal (TLS, protocol errors, an MQTT v5
/// CONNACK refusal, which it turns into a protocol error), leaving the client connected
/// to nothing; its backoff has no jitter, so clients cut off together retry in lockstep;
/// and it never retries a first connection that failed at once. Watching that thread from
/// outside is not possible either: libmosquitto does not say when it has ended. Here each
/// network thread runs one connection attempt and always reports its end (the
/// watchdog: `networkThreadEnded`, reached on every path out of the thread), and that
/// one place decides when to try again. Every reconnection, not only the first, goes
/// through the same backoff.
///
/// The network thread is the only one that drives the connection (connecting, reading,
/// writing, keep-alive); other threads may publish, subscribe and disconnect, which
/// libmosquitto guards with its own mutexes. `mosquitto_threaded_set` tells libmosquitto
/// that threads are in use, so `publish` from another thread only queues the packet,
/// instead of writing (and calling back) on the caller's thread; the caller then wakes
/// the loop (`wake()`).
///
/// The loop is libmosquitto's external-loop API (`mosquitto_socket`, `mosquitto_want_write`,
/// `mosquitto_loop_read`, `_write`, `_misc`) rather than `mosquitto_loop`, for two costs
/// per message the latter has: it waits in `pselect` before every packet it reads, and
/// each publish wakes it through a socket pair it reads one byte at a time. Here one
/// `poll` is followed by reading every packet that has arrived (a burst), then the
/// burst's end is reported (`.caughtUp`), where the bridge hands the burst to its lanes.
///
/// Thread safety (why `@unchecked Sendable` is sound): `handle` and `relay` are set once;
/// `state` is behind its mutex; the handle is used as described above. That one network
/// thread at a time runs, and that only it turns the loop, is asserted (`run`, `turn`).
final class ConnectionSupervisor: @unchecked Sendable {
    /// What a network thread does first.
    enum Start: Sendable {
        /// `mosquitto_connect_async` has begun connecting: run the loop.
        case connecting
        /// The first attempt failed at once with `code` (`reason` read when it failed):
        /// report it, then back off.
        case failed(code: Int32, reason: String)
        /// Connect again (`mosquitto_reconnect_async`: the host, port and keep-alive
        /// given to `mosquitto_connect_async`), then run the loop.
        case reconnect
    }

    private struct State {
        var stopping = false
        /// The network thread running now: at most one at a time drives the connection.
        var networkThread: pthread_t?
        var backoff: ReconnectBackoff
        var random = SystemRandomNumberGenerator()
    }

    /// How long one `mosquitto_loop` call may wait for the socket, in milliseconds: how
    /// soon an idle loop notices a stop request that did not wake it.
    private static let loopTimeout: Int32 = 500
    /// How long a stopping loop keeps running to send DISCONNECT before it gives up
    /// (`endWithoutDisconnect`).
    private static let stopGrace: Duration = .seconds(2)

    private let handle: OpaquePointer
    private let relay: MQTTEventRelay
    private let state: Mutex<State>
    /// Entered for each network thread, left when it ends: `join()` waits on it.
    private let threads = DispatchGroup()
    private let timers = DispatchQueue(label: "Geotify.MQTTClient.reconnect")
    /// Where reconnect delays are timed.
    private let scheduler: any Scheduler
    /// Wakes the network loop when another thread queued something to write.
    private let wakeup = NetworkWakeup()
    /// Asked before a burst waits for more (`BurstPacing`): true when the owner needs
    /// the burst's end at once.
    private let hurry: (@Sendable () -> Bool)?
    /// The protocol whose QoS 0 PUBLISH packets this loop reads out of the read buffer
    /// itself (`takeWholePublishes`; over TLS the plaintext's), or nil to leave every
    /// packet to libmosquitto.
    private let wholePublishes: MQTTProtocolVersion?
    /// The largest PUBLISH packet libmosquitto reads whole; a larger one reaches it cut,
    /// without its payload (`geotify_buffered_socket_cut_publishes`). Nil: none is cut.
    private let cutPublishesOver: Int?

    /// A supervisor for `handle`, whose callbacks reach `relay`, retrying after the
    /// delays `backoff` gives, asking `hurry` before a burst waits for more, reading the
    /// QoS 0 PUBLISH packets of `wholePublishes` itself, and handing libmosquitto PUBLISH
    /// packets larger than `cutPublishesOver` cut (over TLS in the plaintext). Nothing runs
    /// until `begin(_:)`.
    init(
        handle: OpaquePointer, relay: MQTTEventRelay, backoff: ReconnectBackoff, scheduler: any Scheduler,
        hurry: (@Sendable () -> Bool)? = nil, wholePublishes: MQTTProtocolVersion? = nil, cutPublishesOver: Int? = nil
    ) {
        self.handle = handle
        self.relay = relay
        self.wholePublishes = wholePublishes
        self.cutPublishesOver = cutPublishesOver
        self.scheduler = scheduler
        self.hurry = hurry
        state = Mutex(State(backoff: backoff))
        mosquitto_threaded_set(handle, true)
    }

    /// Starts the first network thread; says whether it could be started.
    func begin(_ start: Start) -> Bool {
        launch(start)
    }

    /// Asks the network thread to disconnect cleanly (a DISCONNECT packet, so the broker
    /// drops the will) and end, and cancels further attempts. Returns at once; safe from
    /// any thread, the network thread included.
    func requestStop() {
        state.withLock { $0.stopping = true }
        relay.stopRequested()
        mosquitto_disconnect(handle)
        wakeup.signal()
    }

    /// Wakes the network loop to write what another thread queued.
    func wake() {
        wakeup.signal()
    }

    /// Waits until no network thread runs. After `requestStop()` that takes at most
    /// about `stopGrace`, plus whatever an `onEvent` call in progress takes. Never call it
    /// on a network thread.
    func join() {
        threads.wait()
    }

    /// Whether the calling thread is the network thread running now.
    private var isNetworkThread: Bool {
        state.withLock { state in state.networkThread.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
    }

    private var isStopping: Bool {
        state.withLock { $0.stopping }
    }

    /// Starts a network thread doing `start`, unless stopping; false if the system
    /// could not make a thread.
    private func launch(_ start: Start) -> Bool {
        let go = state.withLock { state in
            guard !state.stopping else { return false }
            threads.enter()
            return true
        }
        guard go else { return true }
        let result = Self.spawn { [self] in run(start) }
        guard result == 0 else {
            threads.leave()
            return false
        }
        return true
    }

    /// Tries again after `delay` seconds; a thread that cannot be made counts as a
    /// failed attempt, reported like one.
    private func relaunch(after delay: Double) {
        scheduler.schedule(after: delay, on: timers) { [weak self] in
            guard let self, !launch(.reconnect) else { return }
            relay.beginAttempt()
            let connectedFor = relay.endAttempt(
                code: MOSQ_ERR_NOMEM.rawValue, reason: "the system could not start a network thread")
            scheduleNext(afterConnectionOf: connectedFor)
        }
    }

    /// One network thread: one connection attempt, from connecting to its end.
    private func run(_ start: Start) {
        state.withLock { state in
            precondition(state.networkThread == nil, "two network threads would drive one connection")
            state.networkThread = pthread_self()
        }
        relay.beginAttempt()
        MQTTEventRelay.listenToLog(on: handle)
        // Whatever this thread buffered of its connection goes with it.
        defer { geotify_buffered_socket_detach() }
        var code = MOSQ_ERR_SUCCESS.rawValue
        var reason = ""
        switch start {
        case .connecting:
            break
        case .failed(let failedCode, let failedReason):
            code = failedCode
            reason = failedReason
        case .reconnect:
            code = mosquitto_reconnect_async(handle)
            if code != MOSQ_ERR_SUCCESS.rawValue {
                reason = MQTTEventRelay.reason(disconnect: code)
            }
        }
        if code == MOSQ_ERR_SUCCESS.rawValue {
            (code, reason) = loop()
        }
        let connectedFor = relay.endAttempt(code: code, reason: reason)
        // Before the next attempt can be scheduled, which starts another network thread.
        state.withLock { $0.networkThread = nil }
        networkThreadEnded(afterConnectionOf: connectedFor)
    }

    /// Runs the network loop until the connection ends or a stop has been carried out;
    /// returns the code that ended it and its reason: 0 for a stop, unless its DISCONNECT
    /// could not be sent in time (`endWithoutDisconnect`). (A connection that fails while
    /// stopping ends as a stop too: libmosquitto reports it so once asked to disconnect.)
    private func loop() -> (Int32, String) {
        // The read buffer's setting is this thread's, for every connection it makes.
        geotify_buffered_socket_cut_publishes(cutPublishesOver ?? 0)
        var stopDeadline: ContinuousClock.Instant?
        var acknowledgements = AcknowledgementPacing.standard
        var bursts = BurstPacing.standard
        while true {
            if isStopping {
                if mosquitto_socket(handle) < 0 {
                    return (0, MQTTEventRelay.reason(disconnect: 0))
                }
                if let stopDeadline {
                    if ContinuousClock.now >= stopDeadline {
                        return endWithoutDisconnect()
                    }
                } else {
                    // The stop may have come while this thread was connecting, before
                    // there was a socket to send DISCONNECT on: send it now.
                    stopDeadline = .now + Self.stopGrace
                    mosquitto_disconnect(handle)
                }
            }
            let code = turn(&acknowledgements, &bursts)
            if code != MOSQ_ERR_SUCCESS.rawValue {
                relay.caughtUp()
                let reason = MQTTEventRelay.reason(disconnect: code)
                return isStopping ? (0, MQTTEventRelay.reason(disconnect: 0)) : (code, reason)
            }
        }
    }

    /// Ends a connection whose DISCONNECT did not leave within `stopGrace` of the stop (a
    /// broker that reads nothing, a full socket): shuts the socket down, so the broker
    /// sees the connection end now, not when the process does, and publishes the will.
    /// Reported as a failure (`MOSQ_ERR_TIMEOUT`), not as the clean end of a stop: the
    /// owner can say that the will goes out.
    private func endWithoutDisconnect() -> (Int32, String) {
        let socket = mosquitto_socket(handle)
        if socket >= 0 { shutdown(socket, Int32(SHUT_RDWR)) }
        return MQTTEventRelay.disconnectNotSent("no room to write it within \(Self.stopGrace.components.seconds) s of the stop")
    }

    /// The most packets read in one burst before the burst's end is reported. Small
    /// enough that what a burst causes to be published leaves in the same turn (on the
    /// side-by-side traffic 256 positions make about 110 messages, 26 of them QoS 1,
    /// within the publisher's window of 100 in flight); large enough that a poll is rare,
    /// and that at full speed `BurstPacing`, not this limit, ends a burst: with 64, a
    /// burst ended before its millisecond did above 64 000 positions a second, and paid
    /// a commit, a write and the lanes' hand-offs for fewer positions. (The
    /// acknowledgements of a burst's QoS 1 messages, queued by libmosquitto as it reads
    /// them, are written after the burst's end, once the owner has handled it: threaded
    /// libmosquitto writes only in `mosquitto_loop_write`.)
    static let burstLimit = 256

    /// The most topic and payload bytes one burst's messages hold before the burst's end is
    /// reported. The owner holds a burst's messages until its end (the lanes take a burst
    /// as one batch), so without it a burst of 256 messages just within the largest
    /// packet the client takes (`MQTTOptions.maximumIncomingPacketBytes`, 320 KiB for the
    /// bridge) held 80 MB, and a burst of 256 at 64 KiB each (the most a whole packet of
    /// the read buffer holds) 16 MB. A position is about 200 bytes: at full speed a burst
    /// of 256 holds about 50 KB, far below it.
    static let burstBytes = 1 << 20

    /// Whether a burst that read `packets` packets whose messages hold `bytes` is to end:
    /// `burstLimit` packets or `burstBytes` bytes.
    static func isFull(packets: Int, bytes: Int) -> Bool {
        packets >= burstLimit || bytes >= burstBytes
    }

    /// `isFull` for a burst that began when the relay's byte count was `bytesBefore`.
    private func isFull(_ packets: Int, bytesBefore: Int) -> Bool {
        Self.isFull(packets: packets, bytes: relay.deliveredBytes - bytesBefore)
    }

    /// Reads packets until the socket has no more or the burst is full (`isFull`:
    /// `packets` counts those read so far in the burst, `bytesBefore` is the relay's byte
    /// count at its start); returns libmosquitto's code when a read failed (the
    /// connection ended), nil otherwise.
    ///
    /// A `mosquitto_loop_read` call reads one packet, or, while the client has QoS 1 or 2
    /// messages queued, as many as it has queued (libmosquitto's rule, whatever its
    /// argument says): so the packets are counted by what the call delivered (messages
    /// and acknowledgements; at least one), not one a call, and a burst ends within one
    /// call of the limit. When this loop takes QoS 0 PUBLISH packets whole, the read
    /// buffer holds libmosquitto to one packet a call
    /// (`geotify_buffered_socket_one_packet`): left to its rule, it read a third of the
    /// side-by-side traffic's positions itself, dozens a call, while notifications waited
    /// for their PUBACK. Counted one a call, a burst of the bridge at full speed, with
    /// dozens of notifications waiting for their PUBACK, read hundreds of positions a
    /// call and thousands before its end.
    private func readBurst(_ packets: inout Int, bytesBefore: Int) -> Int32? {
        var delivered = relay.deliveredPackets
        let whole = wholePublishes.flatMap { relay.isConnected ? $0 : nil }
        repeat {
            if let whole {
                takeWholePublishes(whole, &packets, bytesBefore: bytesBefore)
                delivered = relay.deliveredPackets
                if isFull(packets, bytesBefore: bytesBefore) { break }
            }
            errno = 0
            // libmosquitto reads one packet here, the one the buffer did not offer whole;
            // the packets after it come back to `takeWholePublishes`.
            if whole != nil { geotify_buffered_socket_one_packet(1) }
            let code = mosquitto_loop_read(handle, 1)
            if whole != nil { geotify_buffered_socket_one_packet(0) }
            if code != MOSQ_ERR_SUCCESS.rawValue { return code }
            let now = relay.deliveredPackets
            packets += max(1, now - delivered)
            delivered = now
        } while !isFull(packets, bytesBefore: bytesBefore) && Self.hasMoreToRead(socket: mosquitto_socket(handle))
        return nil
    }

    /// Delivers the QoS 0 PUBLISH packets the read buffer holds whole, in the order they
    /// came, up to the burst's limit, and stops at the first other packet (or one cut off
    /// at the buffer's end), which `mosquitto_loop_read` reads next
    /// (`geotify_buffered_socket_peek_publish`). Only once connected: libmosquitto refuses
    /// a PUBLISH before the CONNACK. For such a packet libmosquitto keeps no state and sends
    /// nothing; it would allocate the message, its topic and its payload, take its locks
    /// and copy the bytes twice, which a profile put at a tenth of the bridge's CPU. The
    /// topic passes libmosquitto's own check (`mosquitto_validate_utf8`) or the packet is
    /// left to libmosquitto, which refuses it as before.
    private func takeWholePublishes(_ version: MQTTProtocolVersion, _ packets: inout Int, bytesBefore: Int) {
        var view = geotify_publish_view()
        let properties: Int32 = version == .v5 ? 1 : 0
        // An empty buffer is filled here, as libmosquitto's first read would fill it, so
        // that a burst's first packet is taken whole too. Nothing at hand, the end of
        // the stream or an error: libmosquitto's read meets it next and says so.
        guard geotify_buffered_socket_pending() > 0 || geotify_buffered_socket_fill() > 0 else { return }
        var taken = 0
        let held = relay.deliveredBytes - bytesBefore
        var added = 0
        while !Self.isFull(packets: packets, bytes: held + added) && geotify_buffered_socket_peek_publish(properties, &view) != 0
            && MQTTEventRelay.acceptsTopic(view) {
            let message = MQTTEventRelay.message(view)
            added += view.topic_length + view.payload_length
            geotify_buffered_socket_take_publish(&view)
            if taken == 0 { relay.beginWhole() }
            relay.deliverWhole(message)
            taken += 1
            packets += 1
        }
        if taken > 0 { relay.endWhole(taken, bytes: added) }
    }

    /// Whether the read buffer or the socket has something to read now (a poll that
    /// does not wait).
    private static func hasArrived(socket: Int32) -> Bool {
        guard socket >= 0 else { return false }
        if geotify_buffered_socket_pending() > 0 { return true }
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
    }

    /// One turn of the loop: waits (up to `loopTimeout`, or until an owed acknowledgement
    /// is due) for the socket or a wake-up, reads every packet that has arrived (up to
    /// `burstLimit`) and, while traffic is dense, what arrives until `bursts` lets the
    /// burst end, reports the burst's end (where the client's owner handles it and
    /// publishes what follows), writes what is queued (and reports what writing it
    /// published), lets libmosquitto keep the connection alive, and, unless what it
    /// wrote carried it, asks for the ACK of what was read as `acknowledgements` paces it.
    /// Returns libmosquitto's code (not success: the connection ended).
    private func turn(_ acknowledgements: inout AcknowledgementPacing, _ bursts: inout BurstPacing) -> Int32 {
        assert(isNetworkThread, "only the network thread drives the connection")
        let socket = mosquitto_socket(handle)
        guard socket >= 0 else { return MOSQ_ERR_NO_CONN.rawValue }
        // From now on libmosquitto's reads of the socket on this thread are served from a
        // buffer one system call fills, and its writes gathered for one system call at the
        // end of the turn (CBufferedSocket). Whole packets may wait in the buffer while
        // the socket has nothing, so they count as readable and the poll does not wait;
        // bytes the kernel did not take yet want the socket writable, as queued packets do.
        // Over TLS (libmosquitto made the connection's SSL object as it connected) the buffer
        // holds ciphertext, and the plaintext libmosquitto reads has a buffer of its own,
        // where packets are taken whole and cut (the connection's first turn says which SSL
        // connection; later turns find it known). Should its buffer not be had,
        // libmosquitto reads every packet itself, whole, as when the socket's is not.
        let attached = geotify_buffered_socket_attach(socket) == 0
        if attached, let ssl = mosquitto_ssl_get(handle) { _ = geotify_buffered_socket_attach_tls(ssl) }
        let buffered = attached && geotify_buffered_socket_pending() > 0
        let wantsWrite = mosquitto_want_write(handle) || geotify_buffered_socket_unsent() > 0
        var descriptors = [
            pollfd(fd: socket, events: Int16(POLLIN) | (wantsWrite ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: wakeup.descriptor, events: Int16(POLLIN), revents: 0),
        ]
        let timeout = buffered ? 0 : acknowledgements.pollTimeout(at: DispatchTime.now().uptimeNanoseconds, usual: Self.loopTimeout)
        let ready = poll(&descriptors, wakeup.descriptor >= 0 ? 2 : 1, timeout)
        if ready < 0 && errno != EINTR { return MOSQ_ERR_ERRNO.rawValue }
        if descriptors[1].revents != 0 { wakeup.drain() }
        let reading = buffered || descriptors[0].revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
        if reading {
            var packets = 0
            let bytesBefore = relay.deliveredBytes
            if let code = readBurst(&packets, bytesBefore: bytesBefore) { return code }
            // Dense traffic: wait for more before the burst ends (BurstPacing).
            while true {
                let wait = bursts.wait(
                    at: DispatchTime.now().uptimeNanoseconds, full: isFull(packets, bytesBefore: bytesBefore),
                    mustWrite: mosquitto_want_write(handle) || geotify_buffered_socket_unsent() > 0,
                    hurried: hurry?() ?? false)
                guard wait > 0 else { break }
                var duration = timespec(tv_sec: Int(wait / 1_000_000_000), tv_nsec: Int(wait % 1_000_000_000))
                nanosleep(&duration, nil)
                guard Self.hasArrived(socket: mosquitto_socket(handle)) else { break }
                if let code = readBurst(&packets, bytesBefore: bytesBefore) { return code }
            }
            bursts.ended(at: DispatchTime.now().uptimeNanoseconds)
        }
        relay.caughtUp()
        // Read again: the reads above may have ended the connection.
        if mosquitto_socket(handle) >= 0 && mosquitto_want_write(handle) {
            let code = mosquitto_loop_write(handle, 1)
            if code != MOSQ_ERR_SUCCESS.rawValue { return code }
            // Writing a QoS 0 message reports it as published, as an acknowledgement does:
            // the owner hears of it now (it may hand over more, written next turn), not
            // only after whatever the socket next brings.
            relay.caughtUp()
        }
        let code = mosquitto_loop_misc(handle)
        // What the turn wrote (its packets, a keep-alive's ping) leaves in one system call
        // and as few segments as fit, instead of a call and a segment a packet. A socket
        // that failed shows in the next turn's poll and read.
        let flushes = geotify_buffered_socket_flushes()
        if mosquitto_socket(handle) >= 0 { _ = geotify_buffered_socket_flush() }
        // Asked after the writes: what they sent carried the ACK (AcknowledgementPacing).
        let sent = geotify_buffered_socket_flushes() != flushes
        if acknowledgements.acknowledgeNow(read: reading, sent: sent, at: DispatchTime.now().uptimeNanoseconds) {
            Self.acknowledgeAtOnce(socket: mosquitto_socket(handle))
        }
        return code
    }

    /// Asks the kernel to acknowledge what was read at once instead of delaying the ACK
    /// (up to 40 ms on Linux); why, and how often, `AcknowledgementPacing` says. Linux
    /// clears the flag after it acknowledges, so it is set again each time.
    private static func acknowledgeAtOnce(socket: Int32) {
        guard socket >= 0 else { return }
        var on: Int32 = 1
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_QUICKACK, &on, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Whether another packet may be read without waiting, just after
    /// `mosquitto_loop_read` returned success: it reads from the socket until the socket
    /// would block (`EAGAIN`), so any other `errno` means there is more. `EAGAIN` alone
    /// does not mean the socket is drained: the last call to leave `errno` may not be the
    /// read (libmosquitto's byte to its wake-up pair for each PUBACK it queued failed with
    /// `EAGAIN` once the pair was full, before Geotify refused it the pair: UnreadWakeups.h).
    /// Taken at its word, that ended every burst of QoS 1 messages after its first
    /// packet. So `EAGAIN` is checked against the read buffer (its last read from the
    /// socket found it empty) or else the socket itself (a poll that does not wait).
    private static func hasMoreToRead(socket: Int32) -> Bool {
        guard socket >= 0 else { return false }
        guard errno == EAGAIN || errno == EWOULDBLOCK else { return true }
        // The buffer's own read found the socket empty (the usual end of a burst): what
        // came since, the next turn's poll sees.
        if geotify_buffered_socket_pending() == 0 && geotify_buffered_socket_socket() == socket
            && geotify_buffered_socket_drained() != 0 {
            return false
        }
        return hasArrived(socket: socket)
    }

    /// The watchdog: every network thread ends here, whatever ended it. Unless stopping,
    /// schedules the next attempt after the backoff delay.
    private func networkThreadEnded(afterConnectionOf connectedFor: Double?) {
        scheduleNext(afterConnectionOf: connectedFor)
        threads.leave()
    }

    private func scheduleNext(afterConnectionOf connectedFor: Double?) {
        let delay: Double? = state.withLock { state in
            guard !state.stopping else { return nil }
            return state.backoff.delay(afterConnectionOf: connectedFor, using: &state.random)
        }
        if let delay {
            relaunch(after: delay)
        }
    }

    /// Starts a detached thread running `body`; returns `pthread_create`'s result.
    private static func spawn(_ body: @escaping @Sendable () -> Void) -> Int32 {
        final class Body {
            let run: @Sendable () -> Void
            init(_ run: @escaping @Sendable () -> Void) { self.run = run }
        }
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { context in
            guard let context else { return nil }
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        if result == 0 {
            pthread_detach(thread)
        } else {
            Unmanaged<Body>.fromOpaque(context).release()
        }
        return result
    }
}
