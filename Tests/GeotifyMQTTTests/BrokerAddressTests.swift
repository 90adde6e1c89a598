import GeotifyMQTT
import Testing

@Suite("BrokerAddress parsing")
struct BrokerAddressTests {
    @Test("mqtt:// and mqtts:// URLs, with and without a port", arguments: [
        ("mqtt://127.0.0.1:1883", BrokerAddress(host: "127.0.0.1", port: 1883, tls: false)),
        ("mqtt://broker.example.com", BrokerAddress(host: "broker.example.com", port: 1883, tls: false)),
        ("mqtts://broker.example.com", BrokerAddress(host: "broker.example.com", port: 8883, tls: true)),
        ("mqtts://broker:9000", BrokerAddress(host: "broker", port: 9000, tls: true)),
        ("MQTT://Broker:1884/", BrokerAddress(host: "Broker", port: 1884, tls: false)),
        ("  mqtt://localhost:1\n", BrokerAddress(host: "localhost", port: 1, tls: false)),
        ("mqtt://[::1]:65535", BrokerAddress(host: "::1", port: 65535, tls: false)),
        ("mqtts://[fe80::1%eth0]", BrokerAddress(host: "fe80::1%eth0", port: 8883, tls: true)),
        // RFC 6874 writes the zone's % escaped, as %25; the system reads it bare.
        ("mqtt://[fe80::1%25eth0]:1884", BrokerAddress(host: "fe80::1%eth0", port: 1884, tls: false)),
        // A Docker Compose service name may hold an underscore.
        ("mqtt://geotify_broker:1883", BrokerAddress(host: "geotify_broker", port: 1883, tls: false)),
    ])
    func parsesGoodURLs(url: String, expected: BrokerAddress) throws {
        #expect(try BrokerAddress(parsing: url) == expected)
    }

    @Test("bad URLs get an error that names the problem", arguments: [
        ("", "empty"),
        ("127.0.0.1:1883", "no scheme"),
        ("tcp://127.0.0.1:1883", "unsupported scheme \"tcp\""),
        ("http://example.com", "unsupported scheme \"http\""),
        ("mqtt://", "no host"),
        ("mqtt://:1883", "no host"),
        ("mqtt://host:", "port \"\""),
        ("mqtt://host:abc", "port \"abc\""),
        ("mqtt://host:0", "port \"0\""),
        ("mqtt://host:65536", "port \"65536\""),
        ("mqtt://host:-1", "port \"-1\""),
        ("mqtt://host:1883/topic", "path"),
        ("mqtt://host?x=1", "query"),
        ("mqtt://host#top", "fragment"),
        ("mqtt://host:+1883", "port \"+1883\""),
        ("mqtt://br\u{F6}ker.example", "characters a host name cannot have"),
        ("mqtt://user:secret@host", "credentials"),
        ("mqtt://::1", "IPv6 address in brackets"),
        ("mqtt://[::1", "never closes"),
        ("mqtt://[::1]x", "not :port"),
        ("mqtt://bad host", "characters a host name cannot have"),
        // A % means something only as an IPv6 address's zone, in brackets.
        ("mqtt://ho%st:1883", "% outside brackets"),
        ("mqtt://host%25eth0", "% outside brackets"),
        ("mqtts://%", "% outside brackets"),
        ("mqtt://host:18%83", "% outside brackets"),
        // Brackets hold an IPv6 address, with a zone that is not empty.
        ("mqtt://[broker]:1883", "\"broker\" in brackets, which is not an IPv6 address"),
        ("mqtt://[127.0.0.1]", "\"127.0.0.1\" in brackets, which is not an IPv6 address"),
        ("mqtt://[fe80::1%]", "empty zone"),
        ("mqtt://[fe80::1%25]", "empty zone"),
        ("mqtt://[%eth0]", "\"\" in brackets, which is not an IPv6 address"),
        ("mqtt://[]", "no host"),
    ])
    func rejectsBadURLs(url: String, expectedText: String) {
        #expect {
            try BrokerAddress(parsing: url)
        } throws: { error in
            guard let error = error as? MQTTError else { return false }
            return error.operation == "parse broker URL" && error.message.contains(expectedText)
                && error.description.contains(expectedText)
        }
    }

    @Test("description gives the URL back")
    func description() throws {
        #expect(try BrokerAddress(parsing: "mqtts://h").description == "mqtts://h:8883")
        #expect(try BrokerAddress(parsing: "mqtt://[::1]").description == "mqtt://[::1]:1883")
        #expect(try BrokerAddress(parsing: "mqtt://[fe80::1%25eth0]").description == "mqtt://[fe80::1%eth0]:1883")
    }
}
