import Foundation

/// Where the server listens: a numeric IPv4 or IPv6 address and a port, written
/// `127.0.0.1:8091`, `[::1]:8091` or `0.0.0.0:8091` (`localhost` means 127.0.0.1).
///
/// Numeric, so what the server binds does not depend on name resolution at start-up.
package struct ListenAddress: Sendable, Equatable, CustomStringConvertible {
    /// The address without brackets: `127.0.0.1`, `::1`.
    package var host: String
    /// The port; 0 lets the system choose (for tests).
    package var port: Int

    /// The loopback address on the default port.
    package static let defaultPort = 8091

    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Reads `host:port`; the message of the error says what is wrong.
    package init(parsing text: String) throws(HTTPSettingsError) {
        let hostPart: Substring
        let portPart: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw HTTPSettingsError("\"\(text)\" is not an address: write an IPv6 address as [::1]:\(ListenAddress.defaultPort)")
            }
            hostPart = text[text.index(after: text.startIndex)..<close]
            portPart = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                throw HTTPSettingsError("\"\(text)\" is not an address: write host:port, e.g. 127.0.0.1:\(ListenAddress.defaultPort)")
            }
            hostPart = text[..<colon]
            portPart = text[text.index(after: colon)...]
        }
        guard let port = Int(portPart), (0...65535).contains(port) else {
            throw HTTPSettingsError("\"\(text)\": the port must be a number from 0 to 65535")
        }
        let host = hostPart == "localhost" ? "127.0.0.1" : String(hostPart)
        guard ListenAddress.family(of: host) != nil else {
            throw HTTPSettingsError("\"\(text)\": \"\(hostPart)\" is not a numeric IPv4 or IPv6 address")
        }
        self.host = host
        self.port = port
    }

    /// Whether only this machine can connect (127.0.0.0/8 or ::1).
    package var isLoopback: Bool {
        host.hasPrefix("127.") || host == "::1"
    }

    /// Whether this is the address of every interface (`0.0.0.0`, `::`), which names
    /// no host another machine could reach the server at.
    package var isWildcard: Bool {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return v4.s_addr == 0 }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, host, &v6) == 1 else { return false }
        return withUnsafeBytes(of: &v6) { $0.allSatisfy { $0 == 0 } }
    }

    package var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    /// `AF_INET` or `AF_INET6` for a numeric address; nil for anything else.
    static func family(of host: String) -> Int32? {
        var v4 = in_addr()
        if inet_pton(AF_INET, host, &v4) == 1 { return AF_INET }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, host, &v6) == 1 { return AF_INET6 }
        return nil
    }

    /// The socket address to bind, as `sockaddr_storage`, with its family.
    func socketAddress() -> (storage: sockaddr_storage, family: Int32)? {
        var storage = sockaddr_storage()
        switch ListenAddress.family(of: host) {
        case AF_INET?:
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    address.pointee.sin_family = sa_family_t(AF_INET)
                    address.pointee.sin_port = UInt16(port).bigEndian
                    inet_pton(AF_INET, host, &address.pointee.sin_addr)
                }
            }
            return (storage, AF_INET)
        case AF_INET6?:
            withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    address.pointee.sin6_family = sa_family_t(AF_INET6)
                    address.pointee.sin6_port = UInt16(port).bigEndian
                    inet_pton(AF_INET6, host, &address.pointee.sin6_addr)
                }
            }
            return (storage, AF_INET6)
        default:
            return nil
        }
    }
}
