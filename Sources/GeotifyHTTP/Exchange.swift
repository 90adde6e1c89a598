import CMicroHTTPD
import Synchronization

/// One request in flight on a connection: its body as it arrives, and the response once
/// the handler gives it, which may come from another thread while the connection is
/// suspended.
///
/// libmicrohttpd calls back for one connection on one thread at a time; the response may
/// arrive from anywhere, so the state is locked, and a suspended connection is resumed
/// exactly once, by whoever delivers the response.
final class Exchange: Sendable {
    let connection: ConnectionHandle
    private let head: HTTPRequest
    /// Answers the request once it is complete (what its header was admitted to).
    let handler: HTTPServer.Handler
    private let state: Mutex<State>

    private struct State {
        var body: BodyBuffer
        var dispatched = false
        /// The response until it is queued: then libmicrohttpd holds it (`HeldBody`), not
        /// the exchange too.
        var response: HTTPResponse?
        var delivered = false
        var suspended = false
    }

    init(connection: ConnectionHandle, request: HTTPRequest, maximumBodyBytes: Int, handler: @escaping HTTPServer.Handler) {
        self.connection = connection
        head = request
        self.handler = handler
        state = Mutex(State(body: BodyBuffer(maximum: maximumBodyBytes)))
    }

    /// The request with the body received so far.
    var request: HTTPRequest {
        var request = head
        request.body = state.withLock { $0.body.bytes }
        return request
    }

    /// Adds body bytes; false once the body is past the size limit (the caller refuses
    /// the request and closes the connection).
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        state.withLock { $0.body.append(bytes) }
    }

    /// The request is complete (or the connection was resumed): dispatches it the first
    /// time, then queues the response if there is one, or suspends until there is.
    func complete(server: HTTPServer) -> MHD_Result {
        let first = state.withLock { state in
            defer { state.dispatched = true }
            return !state.dispatched
        }
        if first { server.dispatch(self) }
        enum Next {
            case send(HTTPResponse)
            case waiting
        }
        let next = state.withLock { state -> Next in
            if let response = state.response {
                state.response = nil
                return .send(response)
            }
            if !server.wait(for: self) {
                return .send(.refusal(.shuttingDown, "the server is stopping"))
            }
            state.suspended = true
            connection.suspend()
            return .waiting
        }
        switch next {
        case .send(let response):
            return server.queue(response, on: connection.pointer, method: head.method, path: head.path)
        case .waiting:
            return .YES
        }
    }

    /// The handler's response (or a timeout's); only the first counts. Resumes the
    /// connection if it was suspended waiting for it.
    func deliver(_ response: HTTPResponse) {
        let resume = state.withLock { state -> Bool in
            guard !state.delivered else { return false }
            state.delivered = true
            state.response = response
            defer { state.suspended = false }
            return state.suspended
        }
        if resume { connection.resume() }
    }
}
