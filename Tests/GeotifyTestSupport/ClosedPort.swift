import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A port of 127.0.0.1 on which nothing listens for as long as this value lives, for
/// tests of what a client does when a connection is refused. `freePort()` is free only
/// when asked: another test's server binding port 0 may be given the same port while
/// the test runs, and its client would then reach that server (and wait for a broker's
/// answer, with a test's timeout of an hour). Here a socket stays bound to the port,
/// without `SO_REUSEADDR` and not listening, so no other socket can bind it and a
/// connection to it is refused.
package final class ClosedPort: Sendable {
    package let port: Int
    private let descriptor: Int32

    package init() throws {
        (descriptor, port) = try bindLoopbackPort()
    }

    deinit {
        close(descriptor)
    }
}
