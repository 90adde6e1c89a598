import CMicroHTTPD
import Foundation
import GeotifyCore
import GeotifyJSON
import GeotifyTime
import Synchronization

/// The HTTP server: libmicrohttpd listening on one address, handing each complete request
/// to a handler and sending what the handler answers, now or later.
///
/// libmicrohttpd runs a small pool of threads, each a poll loop over its share of the
/// connections, so a thousand idle or slow clients cost file descriptors and a little
/// memory, not threads. Not its epoll loop: that one (0.9.75 in Debian 12, unchanged in
/// 1.0.1) takes ready connections from the kernel 128 at a time and, whenever a batch
/// comes back full, calls `epoll_wait` again with the full timeout before handling any;
/// when exactly 128 (or 256, ...) connections become ready at once and nothing else
/// happens, the thread sleeps up to the idle timeout with all of them unread and their
/// clients get no answer. poll reports whatever is ready at every turn, for a scan of the
/// thread's connections (at most `maximumConnections` plus the headroom, shared among the
/// threads). The handler is called on those threads and must not block: a
/// handler that needs another thread's work (a command on its device's lane) answers
/// through its `HTTPResponder` later, and the connection is suspended until then (or
/// until `replyTimeout`, when it gets 504). Event streams are suspended the same way
/// while they have nothing to send.
///
/// Every request is admitted or refused on its header alone (`Admit`: the request line's
/// text, the size rules, the `Host` rules, then the application's routing and login),
/// before a byte of its body is stored, so a client that may not post stores nothing.
/// Every refusal has a status and a JSON reason: a path or query argument holding a
/// control character or bytes that are not UTF-8, escaped or raw (400 `bad_uri`; the
/// server decodes the escapes itself to know: `PercentDecoding`), a body without
/// `Content-Length` (411), with a framing that could hide its size (400), too large (413,
/// also when more arrives than was announced: then the connection is closed too), a missing, repeated or malformed `Host`
/// (400 `bad_host`: `HostHeader`), a header too large (431 and 414, from libmicrohttpd,
/// counted from its log line: `LibraryRefusal`), more than
/// `maximumConnections` open (503), a request, header and body, not complete within
/// `headerTimeout` (408 `header_timeout`, or `request_timeout` once the header is in,
/// then the socket is shut). Each is counted through `count` as `http_refused.<code>`,
/// and every response as `http_responses.<status>`.
package final class HTTPServer: Sendable {
    /// How the server listens and what it tolerates.
    package struct Options: Sendable, Equatable {
        package var listen: ListenAddress
        /// Threads polling connections.
        package var threads: Int = 2
        /// Connections served at once; while more are open, requests are answered 503, up to
        /// as many again (at least 16) open connections, beyond which libmicrohttpd closes
        /// new ones at once.
        package var maximumConnections: Int = 512
        /// The largest request header, in bytes (libmicrohttpd's per-connection memory
        /// is twice this).
        package var maximumHeaderBytes: Int = 16 << 10
        package var limits = RequestLimits(maximumBodyBytes: 1 << 20)
        /// Seconds a connection may take to send a whole request, header and body, from
        /// when it opens or its last response ends (slowloris defence, also against a body
        /// sent a byte at a time). An idle keep-alive connection is closed after it too,
        /// without an answer: libmicrohttpd reports a request only once its header is
        /// whole, so idling cannot be told from sending the next header slowly.
        package var headerTimeout: Double = 10
        /// Seconds a connection may make no progress, sending and reading nothing
        /// (libmicrohttpd's timeout), whole seconds: a client that stops reading its
        /// answer is closed after it.
        package var idleTimeout: Int = 60
        /// Seconds a deferred response may take before the client gets 504.
        package var replyTimeout: Double = 30
        /// Header fields added to every response that does not set them itself (the
        /// security headers).
        package var defaultHeaders: [String: String] = [:]

        package init(listen: ListenAddress) {
            self.listen = listen
        }

        /// Connections answered 503 beyond `maximumConnections` before libmicrohttpd
        /// closes further ones unanswered.
        var headroom: Int { max(16, maximumConnections) }
    }

    /// The severity of a log line.
    package enum LogLevel: Sendable {
        case debug, info, warning, error
    }

    /// Receives log lines; never given a header value, body or password.
    package typealias Log = @Sendable (_ level: LogLevel, _ message: String) -> Void
    /// Counts an event by name (`http_responses.200`, `http_refused.payload_too_large`).
    package typealias Count = @Sendable (_ name: String) -> Void
    /// Answers one request.
    package typealias Handler = @Sendable (_ request: HTTPRequest, _ responder: HTTPResponder) -> Void

    /// What a request's header (before its body) leads to.
    package enum Admission: Sendable {
        /// Answer this at once and close the connection without reading the body.
        case refuse(HTTPResponse)
        /// Read the body, then answer the complete request with this handler.
        case proceed(Handler)
    }

    /// Decides on a request from its header alone (its body is empty), so a request that
    /// will be refused anyway (unknown path, no login) never has its body stored.
    package typealias Admit = @Sendable (_ head: HTTPRequest) -> Admission

    package let options: Options
    let scheduler: any Scheduler
    let log: Log
    let count: Count
    let admit: Admit
    private let timers = DispatchQueue(label: "geotify.http.timers")
    private let state = Mutex(State())
    /// Signalled once, when the last request waiting at a stop has ended (`completed`),
    /// so that `stop()` waits for the refusals without polling.
    private let waitingEnded = DispatchSemaphore(value: 0)

    private struct State {
        var daemon: DaemonHandle?
        var stopping = false
        var connections = ConnectionTable()
        /// Requests waiting, suspended, for their handler's response.
        var waiting: [ObjectIdentifier: Exchange] = [:]
        /// Event streams being served.
        var streams: [ObjectIdentifier: EventSubscription] = [:]
        var reaper: ScheduledWork?
        var lastLibraryMessage: String?
        /// Connections whose request line, read but not yet handed to `begin`, decoded to a
        /// control character or to bytes that are not UTF-8 (`PercentDecoding`), and which.
        var flawedTargets: [UInt: PercentDecoding.Flaw] = [:]
    }

    /// A server answering every request whose header meets the size rules with `handler`.
    package convenience init(options: Options, scheduler: any Scheduler, log: @escaping Log, count: @escaping Count, handler: @escaping Handler) {
        self.init(options: options, scheduler: scheduler, log: log, count: count, admit: { _ in .proceed(handler) })
    }

    /// A server that lets `admit` decide on each request's header first.
    package init(options: Options, scheduler: any Scheduler, log: @escaping Log, count: @escaping Count, admit: @escaping Admit) {
        self.options = options
        self.scheduler = scheduler
        self.log = log
        self.count = count
        self.admit = admit
    }

    /// Starts listening; returns the address bound (with the port the system chose when
    /// `listen.port` is 0).
    package func start() throws(HTTPServerError) -> ListenAddress {
        guard let (storage, family) = options.listen.socketAddress() else {
            throw HTTPServerError("\(options.listen) is not a numeric address")
        }
        // poll, not epoll: see the type's comment.
        var flags = MHD_USE_INTERNAL_POLLING_THREAD.rawValue | MHD_USE_POLL.rawValue
            | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
        if family == AF_INET6 { flags |= MHD_USE_IPv6.rawValue }
        let context = Unmanaged.passRetained(self).toOpaque()
        let completed: MHD_RequestCompletedCallback = { cls, connection, requestContext, _ in
            guard let cls, let connection else { return }
            Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().completed(connection, requestContext)
        }
        let notify: MHD_NotifyConnectionCallback = { cls, connection, _, code in
            guard let cls, let connection else { return }
            Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().notify(connection, opened: code == .CONNECTION_NOTIFY_STARTED)
        }
        let logger: MHD_LogCallback = { cls, format, arguments in
            guard let cls, let format, let arguments else { return }
            var buffer = [CChar](repeating: 0, count: 512)
            vsnprintf(&buffer, buffer.count, format, arguments)
            let message = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().libraryMessage(message)
        }
        // Replaces libmicrohttpd's own unescaping, the same but silent about a decoded `%00`,
        // which ends the C string the path or argument is handed on as: `PercentDecoding`.
        let unescape: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = { cls, connection, text in
            guard let text else { return 0 }
            let length = strlen(text)
            let decoded = text.withMemoryRebound(to: UInt8.self, capacity: length + 1) { bytes in
                let decoded = PercentDecoding.decode(UnsafeMutableBufferPointer(start: bytes, count: length))
                bytes[decoded.count] = 0
                return decoded
            }
            if let flaw = decoded.flaw, let cls, let connection {
                Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().decoded(flaw, on: connection)
            }
            return decoded.count
        }
        let access: MHD_AccessHandlerCallback = { cls, connection, url, method, version, upload, uploadSize, requestContext in
            guard let cls, let connection, let url, let method, let version, let uploadSize, let requestContext else { return .NO }
            return Unmanaged<HTTPServer>.fromOpaque(cls).takeUnretainedValue().access(
                connection, url: url, method: method, version: version, upload: upload, uploadSize: uploadSize, requestContext: requestContext)
        }
        var items: [MHD_OptionItem] = [
            // First (and the array before any other option: `geotify_mhd_start`), so that
            // libmicrohttpd reports the other options' problems through it.
            MHD_OptionItem(option: .EXTERNAL_LOGGER, value: unsafeBitCast(logger, to: Int.self), ptr_value: context),
            MHD_OptionItem(option: .THREAD_POOL_SIZE, value: max(1, options.threads), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_LIMIT, value: options.maximumConnections + options.headroom, ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_TIMEOUT, value: max(1, options.idleTimeout), ptr_value: nil),
            MHD_OptionItem(option: .CONNECTION_MEMORY_LIMIT, value: 2 * options.maximumHeaderBytes, ptr_value: nil),
            // A crowd connecting at once must wait in the kernel's queue, not overflow it
            // (the system caps it at net.core.somaxconn).
            MHD_OptionItem(option: .LISTEN_BACKLOG_SIZE, value: 4096, ptr_value: nil),
            MHD_OptionItem(option: .NOTIFY_COMPLETED, value: unsafeBitCast(completed, to: Int.self), ptr_value: context),
            MHD_OptionItem(option: .NOTIFY_CONNECTION, value: unsafeBitCast(notify, to: Int.self), ptr_value: context),
            MHD_OptionItem(option: .UNESCAPE_CALLBACK, value: unsafeBitCast(unescape, to: Int.self), ptr_value: context),
            MHD_OptionItem(option: .END, value: 0, ptr_value: nil),
        ]
        var address = storage
        let daemon = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                items.withUnsafeMutableBufferPointer { buffer in
                    geotify_mhd_start(flags, socketAddress, access, context, buffer.baseAddress)
                }
            }
        }
        guard let daemon else {
            Unmanaged<HTTPServer>.fromOpaque(context).release()
            let reason = state.withLock { $0.lastLibraryMessage }.map(Self.startFailure)
                ?? (geotify_mhd_available() != 0 ? "libmicrohttpd could not start" : "libmicrohttpd (libmicrohttpd.so.12) cannot be opened")
            throw HTTPServerError("cannot listen on \(options.listen): \(reason)")
        }
        let reaper = scheduler.repeating(every: min(1, options.headerTimeout / 4), on: timers) { [weak self] in
            self?.reapOverdueConnections()
        }
        state.withLock {
            $0.daemon = DaemonHandle(pointer: daemon)
            $0.reaper = reaper
        }
        if !HeldBody.isSentInPlace {
            log(.warning, "http: this libmicrohttpd (older than 0.9.73) copies each answer, so a large answer is held twice and the limit of unsent answers per user does not hold for them (streams' openings keep it)")
        }
        return ListenAddress(host: options.listen.host, port: Int(geotify_mhd_bound_port(daemon)))
    }

    /// Stops accepting, answers requests still waiting with 503, ends event streams and
    /// stops libmicrohttpd. Idempotent.
    /// The longest `stop()` waits for refusals to waiting requests to go out.
    static let stopGrace: DispatchTimeInterval = .seconds(2)

    package func stop() {
        let (daemon, waiting, streams, reaper) = state.withLock { state in
            state.stopping = true
            defer {
                state.daemon = nil
                state.streams = [:]
                state.reaper = nil
            }
            return (state.daemon, Array(state.waiting.values), Array(state.streams.values), state.reaper)
        }
        guard let daemon else { return }
        reaper?.cancel()
        _ = geotify_mhd_quiesce_daemon(daemon.pointer)
        for exchange in waiting {
            exchange.deliver(.refusal(.shuttingDown, "the server is stopping"))
        }
        for stream in streams {
            stream.close()
        }
        // The 503s go out on libmicrohttpd's threads: give them a moment (at most
        // `stopGrace`, on the real clock) to be sent before the daemon closes every
        // connection. The last to end signals `waitingEnded`.
        if !state.withLock({ $0.waiting.isEmpty }) {
            _ = waitingEnded.wait(timeout: .now() + HTTPServer.stopGrace)
        }
        state.withLock { $0.waiting = [:] }
        geotify_mhd_stop_daemon(daemon.pointer)
        Unmanaged.passUnretained(self).release()
    }

    /// How many connections are open.
    package var connectionCount: Int {
        state.withLock { $0.connections.count }
    }

    /// How many connections have sent a request's header and are still sending its body.
    package var receivingCount: Int {
        state.withLock { $0.connections.entries.values.count(where: \.receiving) }
    }

    // MARK: - libmicrohttpd callbacks (on its threads)

    private func access(
        _ connection: OpaquePointer, url: UnsafePointer<CChar>, method: UnsafePointer<CChar>, version: UnsafePointer<CChar>,
        upload: UnsafePointer<CChar>?, uploadSize: UnsafeMutablePointer<Int>,
        requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        guard let context = requestContext.pointee else {
            return begin(
                connection, url: String(cString: url), method: String(cString: method), version: String(cString: version),
                requestContext: requestContext)
        }
        let exchange = Unmanaged<Exchange>.fromOpaque(context).takeUnretainedValue()
        if uploadSize.pointee > 0, let upload {
            guard exchange.append(UnsafeRawBufferPointer(start: upload, count: uploadSize.pointee)) else {
                return refuseOversizedBody(on: connection)
            }
            uploadSize.pointee = 0
            return .YES
        }
        return exchange.complete(server: self)
    }

    /// The first call for a request: its header is complete. Refuses at once what the
    /// header alone decides (a control character in the path or query, the size rules, the
    /// `Host` rules, then `admit`), else keeps an `Exchange` for the body.
    private func begin(
        _ connection: OpaquePointer, url: String, method: String, version: String,
        requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let id = UInt(bitPattern: Int(bitPattern: connection))
        let (stopping, started, open, flaw) = state.withLock { state in
            (state.stopping, state.connections.requestStarted(id), state.connections.count, state.flawedTargets.removeValue(forKey: id))
        }
        guard started else { return .NO }
        let fields = HTTPServer.fields(of: connection, kind: .HEADER_KIND)
        let request = HTTPRequest(
            method: method, path: url,
            query: Dictionary(HTTPServer.fields(of: connection, kind: .GET_ARGUMENT_KIND), uniquingKeysWith: { $1 }),
            headers: Dictionary(fields, uniquingKeysWith: { $1 }))
        func all(_ name: String) -> [String] {
            fields.filter { $0.0.lowercased() == name }.map(\.1)
        }
        let admission: Admission
        if stopping {
            admission = .refuse(.refusal(.shuttingDown, "the server is stopping"))
        } else if open > options.maximumConnections {
            var refusal = HTTPResponse.refusal(.tooManyConnections, "\(open) connections are open; at most \(options.maximumConnections) are served, try again shortly")
            refusal.headers["Retry-After"] = "5"
            admission = .refuse(refusal)
        } else if flaw == .controlCharacter {
            admission = .refuse(.refusal(.badURI, "the path or query holds a control character (an escape such as %00 or %0A, or one sent raw)"))
        } else if flaw == .notUTF8 {
            admission = .refuse(.refusal(.badURI, "the path or query is not UTF-8 once decoded (an escape such as %FF or %C0%AF, or such bytes sent raw)"))
        } else if let refusal = options.limits.refusal(contentLengths: all("content-length"), transferEncodings: all("transfer-encoding")) {
            admission = .refuse(refusal)
        } else if let refusal = HostHeader.refusal(values: all("host"), version: version) {
            admission = .refuse(refusal)
        } else {
            admission = admit(request)
        }
        let handler: Handler
        switch admission {
        case .refuse(var refusal):
            refusal.headers["Connection"] = "close"
            state.withLock { $0.connections.requestReceived(id) }
            return queue(refusal, on: connection, method: method, path: url)
        case .proceed(let proceed):
            handler = proceed
        }
        let exchange = Exchange(
            connection: ConnectionHandle(pointer: connection), request: request,
            maximumBodyBytes: options.limits.maximumBodyBytes, handler: handler)
        requestContext.pointee = Unmanaged.passRetained(exchange).toOpaque()
        return .YES
    }

    /// Hands a complete request to the handler (called once per exchange); the request's
    /// deadline no longer runs.
    func dispatch(_ exchange: Exchange) {
        let id = UInt(bitPattern: Int(bitPattern: exchange.connection.pointer))
        state.withLock { $0.connections.requestReceived(id) }
        exchange.handler(exchange.request, HTTPResponder { [weak exchange] response in
            exchange?.deliver(response)
        })
    }

    /// Registers `exchange` as waiting for a deferred response, with its timeout; false
    /// when the server is stopping (the caller answers 503 instead of waiting).
    func wait(for exchange: Exchange) -> Bool {
        let registered = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.waiting[ObjectIdentifier(exchange)] = exchange
            return true
        }
        if registered {
            let timeout = options.replyTimeout
            scheduler.schedule(after: timeout, on: timers) { [weak exchange] in
                exchange?.deliver(.refusal(.timeout, "no answer within \(JSONWriter.text(of: timeout)) s"))
            }
        }
        return registered
    }

    /// Sends `response` on `connection`.
    func queue(_ response: HTTPResponse, on connection: OpaquePointer, method: String, path: String) -> MHD_Result {
        var response = response
        for (name, value) in options.defaultHeaders where response.headers[name] == nil {
            response.headers[name] = value
        }
        let made: OpaquePointer?
        switch response.body {
        case .bytes(let bytes):
            // Copied into memory libmicrohttpd reads where it is; the array goes when this
            // returns, so a large answer is held once while it is sent (`HeldBody`).
            made = HeldBody(copying: bytes).response(holding: response.lease)
        case .held(let body):
            made = body.response(holding: response.lease)
        case .events(let subscription):
            made = serve(subscription, on: connection)
        }
        guard let made else {
            log(.error, "http: cannot create a response for \(method) \(path)")
            return .NO
        }
        defer { geotify_mhd_destroy_response(made) }
        for (name, value) in response.headers {
            _ = geotify_mhd_add_response_header(made, name, value)
        }
        count("http_responses.\(response.status)")
        if let counter = response.refusalCounter {
            count(counter)
        }
        log(.debug, "http: \(method) \(path) \(response.status)")
        return geotify_mhd_queue_response(connection, UInt32(response.status), made)
    }

    /// A response that streams `subscription`, parking the connection while there is
    /// nothing to send.
    private func serve(_ subscription: EventSubscription, on connection: OpaquePointer) -> OpaquePointer? {
        let registered = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.streams[ObjectIdentifier(subscription)] = subscription
            return true
        }
        if !registered { subscription.close() }
        let stream = StreamedEvents(subscription: subscription, connection: ConnectionHandle(pointer: connection))
        let read: MHD_ContentReaderCallback = { cls, _, buffer, maximum in
            guard let cls, let buffer else { return -1 }
            return Unmanaged<StreamedEvents>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, maximum: maximum)
        }
        let free: MHD_ContentReaderFreeCallback = { cls in
            guard let cls else { return }
            Unmanaged<StreamedEvents>.fromOpaque(cls).takeRetainedValue().finished()
        }
        let context = Unmanaged.passRetained(stream).toOpaque()
        guard let response = geotify_mhd_create_response_from_callback(UInt64.max, 4096, read, context, free) else {
            Unmanaged<StreamedEvents>.fromOpaque(context).release()
            subscription.close()
            return nil
        }
        stream.onFinish = { [weak self] in
            _ = self?.state.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(subscription)) }
        }
        return response
    }

    private func completed(_ connection: OpaquePointer, _ requestContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?) {
        let id = UInt(bitPattern: Int(bitPattern: connection))
        let now = scheduler.uptime
        var exchange: Exchange?
        if let requestContext, let context = requestContext.pointee {
            exchange = Unmanaged<Exchange>.fromOpaque(context).takeRetainedValue()
            requestContext.pointee = nil
        }
        let lastWaitingAtStop = state.withLock { state in
            state.connections.requestEnded(id, at: now)
            guard let exchange, state.waiting.removeValue(forKey: ObjectIdentifier(exchange)) != nil else { return false }
            return state.stopping && state.waiting.isEmpty
        }
        if lastWaitingAtStop { waitingEnded.signal() }
    }

    private func notify(_ connection: OpaquePointer, opened: Bool) {
        let id = UInt(bitPattern: Int(bitPattern: connection))
        if opened {
            let socket = geotify_mhd_connection_socket(connection)
            let now = scheduler.uptime
            state.withLock { $0.connections.opened(id, socket: socket, at: now) }
        } else {
            state.withLock { state in
                state.connections.closed(id)
                state.flawedTargets.removeValue(forKey: id)
            }
        }
    }

    /// The request line being read on `connection` decoded to text with `flaw` (its path
    /// or one of its query arguments; the first flaw found is kept); `begin` refuses the
    /// request.
    private func decoded(_ flaw: PercentDecoding.Flaw, on connection: OpaquePointer) {
        let id = UInt(bitPattern: Int(bitPattern: connection))
        state.withLock { state in
            if state.flawedTargets[id] == nil { state.flawedTargets[id] = flaw }
        }
    }

    /// What libmicrohttpd's last line says about a start that failed. Its bind failure
    /// names port 0 ("Failed to bind to port 0: Address already in use": it is given
    /// the whole socket address, not a port), so only the system's reason is kept.
    static func startFailure(_ message: String) -> String {
        let line = message.trimmingCharacters(in: .whitespacesAndNewlines)
        guard line.hasPrefix("Failed to bind to port "), let colon = line.firstIndex(of: ":") else { return line }
        return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
    }

    /// A line libmicrohttpd logs; one that reports a request it answered by itself (414,
    /// 431, 400: `LibraryRefusal`) is counted as the server's own refusals are.
    private func libraryMessage(_ message: String) {
        state.withLock { $0.lastLibraryMessage = message }
        log(.debug, "http: libmicrohttpd: \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        if let refusal = LibraryRefusal(logLine: message) {
            count("http_responses.\(refusal.status)")
            count(refusal.counter)
        }
    }

    /// Answers 408 to connections whose request (header or body) is overdue and shuts
    /// their sockets. Under
    /// the lock, so a socket is never shut after libmicrohttpd closed it (it reports the
    /// close, which takes the lock, before closing the descriptor).
    private func reapOverdueConnections() {
        let now = scheduler.uptime
        let timeout = options.headerTimeout
        let reaped = state.withLock { state -> [ConnectionTable.Overdue] in
            let overdue = state.connections.overdue(at: now, timeout: timeout)
            for connection in overdue where connection.socket >= 0 {
                if connection.answer {
                    HTTPServer.answerTimeout(on: connection.socket, after: timeout, receiving: connection.receiving)
                }
                shutdown(connection.socket, Int32(SHUT_RDWR))
            }
            return overdue
        }
        // An idle keep-alive connection closed is not a refusal: nothing was asked, and
        // nothing answered. A 408 is a response as well as a refusal, as a 413 written
        // straight to the socket is.
        for connection in reaped where connection.answer {
            count("http_responses.408")
            count((connection.receiving ? HTTPRefusalCode.requestTimeout : .headerTimeout).counter)
        }
        if !reaped.isEmpty {
            log(.debug, "http: closed \(Counted(reaped.count, "connection")) that sent no complete request within \(JSONWriter.text(of: timeout)) s")
        }
    }

    /// Writes a 408 straight to a socket whose client never completed a header, or a
    /// body (nothing else has been written for the request), without blocking.
    private static func answerTimeout(on socket: Int32, after timeout: Double, receiving: Bool) {
        if receiving {
            answer(on: socket, .requestTimeout, reason: "Request Timeout", message: "the request body did not arrive within \(JSONWriter.text(of: timeout)) s")
        } else {
            answer(on: socket, .headerTimeout, reason: "Request Timeout", message: "the request header did not arrive within \(JSONWriter.text(of: timeout)) s")
        }
    }

    /// A body grew past `maximumBodyBytes` while arriving (its header announced less, or
    /// nothing): answers 413 straight to the socket (nothing has been written for this
    /// request) and closes the connection, keeping none of it.
    private func refuseOversizedBody(on connection: OpaquePointer) -> MHD_Result {
        let maximum = options.limits.maximumBodyBytes
        HTTPServer.answer(
            on: geotify_mhd_connection_socket(connection), .payloadTooLarge, reason: "Content Too Large",
            message: "the body is larger than the \(maximum) bytes accepted")
        count("http_responses.413")
        count(HTTPRefusalCode.payloadTooLarge.counter)
        log(.debug, "http: closed a connection whose body went past \(maximum) bytes")
        return .NO
    }

    /// Writes a JSON refusal straight to `socket`, without blocking, before it is closed:
    /// `code`'s status with `reason`, its reason phrase.
    private static func answer(on socket: Int32, _ code: HTTPRefusalCode, reason: String, message: String) {
        guard let status = code.status else { preconditionFailure("\(code.rawValue) is counted, never answered") }
        guard socket >= 0 else { return }
        let body = JSONWriter().string(["ok": false, "error": ["code": .string(code.rawValue), "message": .string(message)]])
        let text = "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        _ = text.withCString { send(socket, $0, strlen($0), Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
    }

    /// The header fields or query arguments of a connection, every copy, in the order sent.
    private static func fields(of connection: OpaquePointer, kind: MHD_ValueKind) -> [(String, String)] {
        final class Collected {
            var values: [(String, String)] = []
        }
        let collected = Collected()
        let iterator: MHD_KeyValueIterator = { cls, _, key, value in
            guard let cls, let key else { return .YES }
            let collected = Unmanaged<Collected>.fromOpaque(cls).takeUnretainedValue()
            collected.values.append((String(cString: key), value.map { String(cString: $0) } ?? ""))
            return .YES
        }
        withExtendedLifetime(collected) {
            _ = geotify_mhd_get_connection_values(connection, kind, iterator, Unmanaged.passUnretained(collected).toOpaque())
        }
        return collected.values
    }
}

/// libmicrohttpd's daemon pointer. It lives only in the server's `Mutex`-guarded state,
/// is taken out once by `stop()`, and the daemon itself is thread-safe for the calls made
/// on it (quiesce, stop), so no thread confinement is needed.
private struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
