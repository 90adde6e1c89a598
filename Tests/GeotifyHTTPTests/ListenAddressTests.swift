import GeotifyHTTP
import Testing

@Suite struct ListenAddressTests {
    @Test func numericAddressesAndPortsAreRead() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:8091") == ListenAddress(host: "127.0.0.1", port: 8091))
        #expect(try ListenAddress(parsing: "[::1]:80") == ListenAddress(host: "::1", port: 80))
        #expect(try ListenAddress(parsing: "localhost:0") == ListenAddress(host: "127.0.0.1", port: 0))
        #expect(try ListenAddress(parsing: "[::1]:80").description == "[::1]:80")
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
}
