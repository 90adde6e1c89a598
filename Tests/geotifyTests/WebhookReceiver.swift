import Dispatch
import GeotifyTestSupport
import Synchronization

/// A webhook endpoint for the delivery tests: a `TestHTTPServer` whose answer on each
/// path the test sets and changes as it goes (accept, fail with 503, with or without
/// `Retry-After`, hold), recording
/// every request with the answer it got, so a test counts idempotency keys the way a
/// receiver that deduplicates would.
final class WebhookReceiver: Sendable {
    /// How the receiver treats requests on one path.
    enum Behaviour: Sendable, Equatable {
        /// 200 at once.
        case accept
        /// 503 at once: the receiver is down for maintenance.
        case fail
        /// 503 at once with `Retry-After: seconds`: down for maintenance, and saying when
        /// to come back (which the bridge heeds instead of its own back-off).
        case failRetryAfter(seconds: Int)
        /// Keeps the request for up to `seconds` (or until `release()`), then answers as
        /// the path's behaviour says by then, 200 if it is still `hold`.
        case hold(seconds: Double)
    }

    /// One request and, once given, the status it was answered with.
    struct Exchange: Sendable {
        var path: String
        /// The `Idempotency-Key` header.
        var key: String
        var request: TestHTTPServer.Request
        var status: Int?

        var acknowledged: Bool { status.map { (200..<300).contains($0) } ?? false }
    }

    private struct State {
        var behaviours: [String: Behaviour]
        var exchanges: [Exchange] = []
        /// One semaphore per request being held.
        var held: [DispatchSemaphore] = []
    }

    /// The state, shared with the server's connection threads.
    private final class Ledger: Sendable {
        let state: Mutex<State>

        init(_ behaviours: [String: Behaviour]) {
            state = Mutex(State(behaviours: behaviours))
        }
    }

    private let ledger: Ledger
    private let server: TestHTTPServer

    /// A receiver that treats every path as `behaviours` says (accepting paths it does not name).
    init(_ behaviours: [String: Behaviour] = [:]) throws {
        let ledger = Ledger(behaviours)
        self.ledger = ledger
        server = try TestHTTPServer { request in WebhookReceiver.answer(request, ledger: ledger) }
    }

    deinit {
        release()
        server.stop()
    }

    /// The URL of `path` (`/hook`).
    func url(_ path: String) -> String { server.url + path }

    /// Sets how requests on `path` are treated from now on.
    func set(_ path: String, _ behaviour: Behaviour) {
        ledger.state.withLock { $0.behaviours[path] = behaviour }
    }

    /// Lets every held request go on to its answer.
    func release() {
        let held = ledger.state.withLock { state in
            defer { state.held.removeAll() }
            return state.held
        }
        held.forEach { $0.signal() }
    }

    /// Every request so far, in order of arrival.
    var exchanges: [Exchange] { ledger.state.withLock { $0.exchanges } }

    /// How many requests are being held now.
    var holding: Int { ledger.state.withLock { $0.held.count } }

    /// The keys received on `path`, every attempt, in order of arrival.
    func received(_ path: String) -> [String] {
        exchanges.filter { $0.path == path }.map(\.key)
    }

    /// The keys acknowledged (answered 2xx) on `path`, in order of arrival.
    func acknowledged(_ path: String) -> [String] {
        exchanges.filter { $0.path == path && $0.acknowledged }.map(\.key)
    }

    private static func answer(_ request: TestHTTPServer.Request, ledger: Ledger) -> TestHTTPServer.Response {
        let key = request.headers["idempotency-key"] ?? ""
        let (index, behaviour) = ledger.state.withLock { state in
            state.exchanges.append(Exchange(path: request.path, key: key, request: request, status: nil))
            return (state.exchanges.count - 1, state.behaviours[request.path] ?? .accept)
        }
        var answer = behaviour
        if case .hold(let seconds) = behaviour {
            let gate = DispatchSemaphore(value: 0)
            ledger.state.withLock { $0.held.append(gate) }
            let released = gate.wait(timeout: .now() + seconds) == .success
            answer = ledger.state.withLock { state in
                if !released { state.held.removeAll { $0 === gate } }
                return state.behaviours[request.path] ?? .accept
            }
        }
        let response: TestHTTPServer.Response = switch answer {
        case .fail: .init(status: 503, body: "down for maintenance")
        case .failRetryAfter(let seconds): .init(status: 503, headers: ["Retry-After": "\(seconds)"], body: "down for maintenance")
        case .accept, .hold: .init(body: #"{"ok":true}"#)
        }
        ledger.state.withLock { $0.exchanges[index].status = response.status }
        return response
    }
}
