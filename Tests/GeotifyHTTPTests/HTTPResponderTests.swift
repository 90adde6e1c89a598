import GeotifyHTTP
import Synchronization
import Testing

/// The one answer a request gets, however many its handler and its timeout send.
@Suite struct HTTPResponderTests {
    /// A handler that answers and then hears its own timeout (or answers twice) sends
    /// one response: the first; the later ones are dropped.
    @Test func theFirstResponseIsTheOnlyOneSent() {
        let sent = Mutex<[Int]>([])
        let responder = HTTPResponder { response in sent.withLock { $0.append(response.status) } }
        responder.send(HTTPResponse(status: 200))
        responder.send(.refusal(.timeout, "no answer"))
        responder.send(HTTPResponse(status: 204))
        #expect(sent.withLock { $0 } == [200])
    }
}
