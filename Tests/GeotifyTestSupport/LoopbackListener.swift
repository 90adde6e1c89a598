import Foundation

/// A listening TCP socket on 127.0.0.1, on a port the kernel picks (so no other test can
/// take it first), for the tests' stand-in brokers (`SilentBroker`, the session-takeover
/// broker). Returns the descriptor, which the caller closes, and the port.
package func listenOnLoopback() throws -> (socket: Int32, port: Int) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard listener >= 0 else { throw TestSupportError("socket: \(String(cString: strerror(errno)))") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let ready = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
            bind(listener, address, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, address, &length) == 0
        }
    }
    guard ready else {
        let reason = String(cString: strerror(errno))
        close(listener)
        throw TestSupportError("cannot listen on 127.0.0.1: \(reason)")
    }
    return (listener, Int(UInt16(bigEndian: address.sin_port)))
}
