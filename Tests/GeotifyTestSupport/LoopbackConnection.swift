import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Connects a new TCP socket to 127.0.0.1:`port` and returns its descriptor, which the
/// caller closes. A connect that a signal interrupted (`EINTR`: the connection goes on
/// being made) is waited for, up to `timeout` seconds: other tests' child processes end
/// all the time, and the signals that tell the test process of it may land on this thread.
package func connectToLoopback(port: Int, timeout: Double = 10) throws -> Int32 {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw TestSupportError("socket() failed: \(String(cString: strerror(errno)))") }
    var address = loopbackAddress(port: port)
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard connected == 0 || (errno == EINTR && finishConnecting(descriptor, timeout: timeout)) else {
        let reason = String(cString: strerror(errno))
        close(descriptor)
        throw TestSupportError("connect(127.0.0.1:\(port)) failed: \(reason)")
    }
    return descriptor
}

/// Whether a connect that a signal interrupted succeeds within `timeout` seconds;
/// `errno` says why not when it does not.
private func finishConnecting(_ descriptor: Int32, timeout: Double) -> Bool {
    var writable = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
    var ready: Int32
    repeat { ready = poll(&writable, 1, Int32(timeout * 1_000)) } while ready < 0 && errno == EINTR
    guard ready > 0 else {
        if ready == 0 { errno = ETIMEDOUT }
        return false
    }
    var failure: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length) == 0 else { return false }
    errno = failure
    return failure == 0
}

/// The IPv4 address 127.0.0.1:`port` (port 0: one the kernel chooses, `freePort()`).
func loopbackAddress(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    return address
}
