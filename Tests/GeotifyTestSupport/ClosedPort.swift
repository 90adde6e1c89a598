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
/// can bind it and a connection to it is refused. (Nor does the kernel give the port to
/// an outgoing connection: it takes only ports no socket is bound to.) For a server that
/// comes later, `admitServer()` lets the test's own server bind it while it is held.
package final class ClosedPort: Sendable {
    package let port: Int
    /// The bound socket; -1 once released.
    private let descriptor: Mutex<Int32>

    package init() throws {
        let (descriptor, port) = try bindLoopbackPort()
        self.port = port
        self.descriptor = Mutex(descriptor)
    }

    /// Lets a server the test starts next on the port (a broker that was missing, then
    /// comes) bind it and listen while it is still held: the held socket takes
    /// `SO_REUSEADDR`, which the server sets too (mosquitto does, as most servers do).
    /// `release()` once the server listens. The port is never free in between: when it
    /// was let go first, an outgoing connection of another test took it once in CI, and
    /// the test's mosquitto could not bind it ("Address already in use").
    package func admitServer() throws {
        try descriptor.withLock { descriptor in
            var one: Int32 = 1
            guard descriptor >= 0, setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw TestSupportError("cannot let a server share port \(port): \(descriptor < 0 ? "released" : String(cString: strerror(errno)))")
            }
        }
    }

    /// Lets the port go now.
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
