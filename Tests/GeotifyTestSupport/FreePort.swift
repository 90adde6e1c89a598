import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Finds a TCP port on 127.0.0.1 that is free right now: binds port 0, reads back the
/// port the kernel chose, and closes the socket. Something else may take it before the
/// caller binds it, so callers retry with a new port when binding fails. For a port that
/// must stay without a listener, `ClosedPort`.
package func freePort() throws -> Int {
    let (descriptor, port) = try bindLoopbackPort()
    close(descriptor)
    return port
}

/// A TCP socket bound to a port of 127.0.0.1 the kernel chose (port 0), not listening,
/// without `SO_REUSEADDR`; the caller closes it.
func bindLoopbackPort() throws -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else {
        throw TestSupportError("socket() failed: \(String(cString: strerror(errno)))")
    }
    var address = loopbackAddress(port: 0)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    guard bound == 0 else {
        let reason = String(cString: strerror(errno))
        close(descriptor)
        throw TestSupportError("bind(127.0.0.1:0) failed: \(reason)")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            getsockname(descriptor, $0, &length)
        }
    }
    guard named == 0 else {
        let reason = String(cString: strerror(errno))
        close(descriptor)
        throw TestSupportError("getsockname() failed: \(reason)")
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}

/// Whether something accepts TCP connections on 127.0.0.1:`port` (connects and closes).
package func acceptsConnections(port: Int) -> Bool {
    guard let descriptor = try? connectToLoopback(port: port) else { return false }
    close(descriptor)
    return true
}

/// Calls `start` with `count` ports `freePort()` chose; when it throws an error
/// `retrying` accepts (another process took a port between its choice and its use: the
/// suites run in parallel, each choosing ports), calls it again with fresh ones, up to
/// `attempts` times in all. Returns what `start` made and the ports it was given.
package func withFreePorts<Value>(
    _ count: Int, attempts: Int = 5, retrying: (any Error) -> Bool = { _ in true }, _ start: ([Int]) throws -> Value
) throws -> (value: Value, ports: [Int]) {
    var attempt = 1
    while true {
        let ports = try (0..<count).map { _ in try freePort() }
        do {
            return (try start(ports), ports)
        } catch where attempt < attempts && retrying(error) {
            attempt += 1
        }
    }
}
