#if canImport(Glibc)
import Glibc
#endif

/// A broker address parsed from a URL: `mqtt://host[:port]` (plain TCP, port 1883 by
/// default) or `mqtts://host[:port]` (TLS, port 8883 by default). IPv6 addresses go in
/// brackets (`mqtt://[::1]:1883`), with a zone after `%25` as RFC 6874 writes it
/// (`mqtt://[fe80::1%25eth0]`) or after a bare `%`; a `%` anywhere else is refused. The
/// scheme is case-insensitive and one trailing `/` is allowed; anything else gets an
/// error saying what is wrong.
package struct BrokerAddress: Sendable, Equatable, CustomStringConvertible {
    /// The host name or IP address (IPv6 without brackets, a zone after a bare `%`, as
    /// `getaddrinfo` reads it: `fe80::1%eth0`).
    package var host: String
    /// The TCP port, 1 to 65535.
    package var port: Int
    /// Whether the connection uses TLS (the URL said `mqtts`).
    package var tls: Bool

    /// Creates an address from its parts.
    package init(host: String, port: Int, tls: Bool) {
        self.host = host
        self.port = port
        self.tls = tls
    }

    /// Parses a broker URL; throws an `MQTTError` saying what is wrong with a bad one.
    package init(parsing text: String) throws(MQTTError) {
        let operation = "parse broker URL"
        let url = text.trimmingWhitespace()
        guard !url.isEmpty else {
            throw .invalid(operation, "the broker URL is empty; expected mqtt://host[:port] or mqtts://host[:port]")
        }
        guard let separator = url.firstRange(of: "://") else {
            throw .invalid(operation, "\"\(url)\" has no scheme; expected mqtt://host[:port] or mqtts://host[:port]")
        }
        let scheme = url[..<separator.lowerBound].lowercased()
        let defaultPort: Int
        switch scheme {
        case "mqtt":
            tls = false
            defaultPort = 1883
        case "mqtts":
            tls = true
            defaultPort = 8883
        default:
            throw .invalid(operation, "unsupported scheme \"\(scheme)\" in \"\(url)\"; use mqtt:// or mqtts://")
        }
        var authority = url[separator.upperBound...]
        if authority.hasSuffix("/") {
            authority = authority.dropLast()
        }
        if authority.contains(where: { "/?#".contains($0) }) {
            throw .invalid(
                operation, "\"\(url)\" has a path, query or fragment; a broker URL has only a host and a port"
            )
        }
        if authority.contains("@") {
            throw .invalid(
                operation,
                "\"\(url)\" holds credentials; give the username and password separately, not in the URL"
            )
        }
        let hostPart: Substring
        let portPart: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw .invalid(operation, "\"\(url)\" opens an IPv6 address with [ but never closes it with ]")
            }
            hostPart = try Self.bracketedHost(
                authority[authority.index(after: authority.startIndex)..<close], in: url, operation: operation)
            let rest = authority[authority.index(after: close)...]
            if rest.isEmpty {
                portPart = nil
            } else if rest.hasPrefix(":") {
                portPart = rest.dropFirst()
            } else {
                throw .invalid(operation, "\"\(url)\" has text after the IPv6 address that is not :port")
            }
        } else {
            let colons = authority.filter { $0 == ":" }.count
            if colons > 1 {
                throw .invalid(operation, "\"\(url)\": put an IPv6 address in brackets, as in mqtt://[::1]:1883")
            }
            if authority.contains("%") {
                throw .invalid(
                    operation,
                    "\"\(url)\" has a % outside brackets; only an IPv6 address's zone may have one, as in mqtt://[fe80::1%25eth0]"
                )
            }
            if let colon = authority.firstIndex(of: ":") {
                hostPart = authority[..<colon]
                portPart = authority[authority.index(after: colon)...]
            } else {
                hostPart = authority
                portPart = nil
            }
        }
        guard !hostPart.isEmpty else {
            throw .invalid(operation, "\"\(url)\" has no host")
        }
        guard hostPart.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-._:%".contains($0)) }) else {
            throw .invalid(operation, "host \"\(hostPart)\" in \"\(url)\" holds characters a host name cannot have")
        }
        host = String(hostPart)
        if let portPart {
            guard !portPart.isEmpty, portPart.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let number = Int(portPart), (1...65_535).contains(number)
            else {
                throw .invalid(operation, "port \"\(portPart)\" in \"\(url)\" is not a number from 1 to 65535")
            }
            port = number
        } else {
            port = defaultPort
        }
    }

    /// The host that brackets hold, as the system reads it: an IPv6 address
    /// (`inet_pton`'s reading), with its zone, if any, after a bare `%` (RFC 6874 writes
    /// the `%` escaped, `%25eth0`). Anything else is refused: a host name in brackets, or
    /// an empty zone, would otherwise reach the resolver and fail there, in words about
    /// the network rather than the URL. Empty brackets are left to "no host".
    private static func bracketedHost(_ inside: Substring, in url: String, operation: String) throws(MQTTError) -> Substring {
        guard !inside.isEmpty else { return inside }
        let parts = inside.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, String(parts[0]), &bytes) == 1 else {
            throw .invalid(operation, "\"\(url)\" has \"\(parts[0])\" in brackets, which is not an IPv6 address; a host name or an IPv4 address goes without brackets")
        }
        guard parts.count == 2 else { return inside }
        let zone = parts[1].hasPrefix("25") ? parts[1].dropFirst(2) : parts[1]
        guard !zone.isEmpty else {
            throw .invalid(operation, "\"\(url)\" has an empty zone after the %; name the interface, as in mqtt://[fe80::1%25eth0]")
        }
        return parts[0] + "%" + zone
    }

    /// The address as a URL, `mqtt://host:port` or `mqtts://host:port`.
    package var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(tls ? "mqtts" : "mqtt")://\(shownHost):\(port)"
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces, tabs and line breaks.
    fileprivate func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        guard let first = firstIndex(where: { !isSpace($0) }),
              let last = lastIndex(where: { !isSpace($0) })
        else {
            return ""
        }
        return String(self[first...last])
    }
}
