#if canImport(Glibc)
import Glibc
#endif
@testable import GeotifyHTTP
import Testing

@Suite struct ListenAddressTests {
    @Test func numericAddressesAndPortsAreRead() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:8091") == ListenAddress(host: "127.0.0.1", port: 8091))
        #expect(try ListenAddress(parsing: "[::1]:80") == ListenAddress(host: "::1", port: 80))
        #expect(try ListenAddress(parsing: "localhost:0") == ListenAddress(host: "127.0.0.1", port: 0))
        #expect(try ListenAddress(parsing: "[::1]:80").description == "[::1]:80")
    }

    /// The address given to the server to bind: an IPv6 one (`"[::1]:8091"`) as a
    /// `sockaddr_in6` with its port in network order, as an IPv4 one is a `sockaddr_in`.
    /// (No test binds one: the tests talk to 127.0.0.1 only.)
    @Test func theSocketAddressOfEachFamilyHoldsItsHostAndPort() throws {
        var (storage, family) = try #require(ListenAddress(host: "::1", port: 8091).socketAddress())
        #expect(family == AF_INET6)
        let v6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
        #expect(Int32(v6.sin6_family) == AF_INET6 && UInt16(bigEndian: v6.sin6_port) == 8091)
        #expect(withUnsafeBytes(of: v6.sin6_addr) { Array($0) } == Array(repeating: 0, count: 15) + [1])
        (storage, family) = try #require(ListenAddress(host: "127.0.0.1", port: 8091).socketAddress())
        #expect(family == AF_INET)
        let v4 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
        #expect(Int32(v4.sin_family) == AF_INET && UInt16(bigEndian: v4.sin_port) == 8091)
        #expect(withUnsafeBytes(of: v4.sin_addr) { Array($0) } == [127, 0, 0, 1])
        #expect(ListenAddress(host: "example.org", port: 80).socketAddress() == nil, "only numeric addresses")
    }

    @Test func namesBadPortsAndBareIPv6AreRefused() {
        for text in ["example.org:80", "127.0.0.1", "127.0.0.1:99999", "::1:80", "[::1]80", "127.0.0.1:http"] {
            #expect(throws: HTTPSettingsError.self, "\(text)") { try ListenAddress(parsing: text) }
        }
    }

    @Test func loopbackIsToldApart() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:1").isLoopback)
        #expect(try ListenAddress(parsing: "[::1]:1").isLoopback)
        #expect(try !ListenAddress(parsing: "0.0.0.0:1").isLoopback)
        #expect(try !ListenAddress(parsing: "192.168.1.2:1").isLoopback)
    }

    @Test func everyInterfaceIsToldApart() throws {
        for text in ["0.0.0.0:1", "[::]:1", "[0:0::0]:1"] {
            #expect(try ListenAddress(parsing: text).isWildcard, "\(text)")
        }
        for text in ["127.0.0.1:1", "[::1]:1", "192.168.1.2:1", "0.0.0.1:1"] {
            #expect(try !ListenAddress(parsing: text).isWildcard, "\(text)")
        }
    }

    /// The ports' range ends at 65535, which is read, as 65536 is refused.
    @Test func thePortsEndAt65535() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:65535").port == 65535)
        #expect(try ListenAddress(parsing: "[::1]:65535").port == 65535)
        #expect(throws: HTTPSettingsError.self) { try ListenAddress(parsing: "127.0.0.1:65536") }
    }

    /// Every address of 127.0.0.0/8 is the loopback, not only 127.0.0.1.
    @Test func everyAddressOf127IsLoopback() throws {
        for text in ["127.0.0.2:1", "127.1.2.3:8091", "127.255.255.254:1"] {
            #expect(try ListenAddress(parsing: text).isLoopback, "\(text)")
        }
        #expect(try !ListenAddress(parsing: "128.0.0.1:1").isLoopback)
    }
}
