import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A port of 127.0.0.1 on which nothing listens while this value lives (or until
/// `release()`), for tests of what a client does when a connection is refused.
/// `freePort()` is free only when asked: another test's server binding port 0 may be
/// given the same port while the test runs, and its client would then reach that server
/// (and wait for a broker's answer, with a test's timeout of an hour). Here a socket
/// stays bound to the port, without `SO_REUSEADDR` and not listening, so no other socket
/// can bind it and a connection to it is refused.
package final class ClosedPort: Sendable {
    package let port: Int
    /// The bound socket; -1 once released.
    private let descriptor: Mutex<Int32>

    package init() throws {
        let (descriptor, port) = try bindLoopbackPort()
        self.port = port
        self.descriptor = Mutex(descriptor)
    }

    /// Lets the port go now, for a test that starts its own server on it next (a broker
    /// that was missing, then comes).
    package func release() {
        descriptor.withLock { descriptor in
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }

    deinit {
        release()
    }
}
