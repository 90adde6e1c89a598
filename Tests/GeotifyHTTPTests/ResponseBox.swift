import GeotifyHTTP
import Synchronization

/// Holds the response a handler sent, for tests that call handlers directly.
final class ResponseBox: Sendable {
    private let value = Mutex<HTTPResponse?>(nil)

    func set(_ response: HTTPResponse) {
        value.withLock { $0 = response }
    }

    var response: HTTPResponse? {
        value.withLock { $0 }
    }
}
