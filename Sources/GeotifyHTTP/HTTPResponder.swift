import Synchronization

/// Where a handler sends its one response, now or later from any thread (a command runs
/// on its device's lane and answers from there).
///
/// The first response wins; later ones are ignored, so a handler racing its own timeout
/// cannot answer twice.
package final class HTTPResponder: Sendable {
    private let delivery: Mutex<(@Sendable (HTTPResponse) -> Void)?>

    /// A responder that hands the response to `deliver` once.
    package init(_ deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        delivery = Mutex(deliver)
    }

    /// Sends `response`, unless one was sent already.
    package func send(_ response: HTTPResponse) {
        let deliver = delivery.withLock { deliver in
            defer { deliver = nil }
            return deliver
        }
        deliver?(response)
    }
}
