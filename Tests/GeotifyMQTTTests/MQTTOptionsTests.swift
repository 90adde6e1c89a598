import GeotifyMQTT
import Testing

@Suite("MQTTOptions checks")
struct MQTTOptionsTests {
    private static func options(_ change: (inout MQTTOptions) -> Void) -> MQTTOptions {
        var options = MQTTOptions(clientID: "options-test")
        change(&options)
        return options
    }

    @Test("bad options are refused when the client is made, with a specific message", arguments: [
        (options { $0.clientID = "" }, "client id is required"),
        (options { $0.keepAlive = 1 }, "keep-alive 1"),
        (options { $0.port = 0 }, "port 0"),
        (options { $0.host = "" }, "host is empty"),
        (options { $0.host = "127.0.0.1\u{0}.example" }, "the broker host is empty or contains a NUL character"),
        (options { $0.port = 65_536 }, "port 65536 is not between 1 and 65535"),
        (options { $0.keepAlive = 65_536 }, "keep-alive 65536 s"),
        (options { $0.tls = MQTTTLS(keyFile: "k.pem") }, "together"),
        (options { $0.password = "secret" }, "password needs a username"),
        (options { $0.reconnectDelayMin = 0 }, "reconnect delays"),
        (options { $0.reconnectDelayMax = 0 }, "reconnect delays"),
        (options { $0.reconnectDelayMin = 0.001 }, "reconnect delays"),
        (options { $0.reconnectDelayMax = .infinity }, "reconnect delays"),
        (options { $0.will = MQTTWill(topic: "a/#", payload: []) }, "wildcards"),
        (options { $0.will = MQTTWill(topic: "a", payload: [], qos: 3) }, "QoS 3"),
        (options { $0.tls = MQTTTLS(certFile: "c.pem") }, "together"),
        (options { $0.clientID = "geo\u{0}tify" }, "the client id contains a NUL character or is longer than 65535 bytes"),
        (options { $0.clientID = String(repeating: "g", count: 65_536) }, "the client id contains a NUL character or is longer than 65535 bytes"),
        (options { $0.will = MQTTWill(topic: "a", payload: Array(repeating: 0x6F, count: 65_536)) }, "the payload is 65536 bytes; a will holds at most 65535"),
        (options { $0.maximumIncomingPacketBytes = 0 }, "the largest incoming packet, 0 bytes, is not between 1 and 4294967295"),
        (options { $0.maximumIncomingPacketBytes = 4_294_967_296 }, "the largest incoming packet, 4294967296 bytes, is not between 1 and 4294967295"),
    ])
    func rejectsBadOptions(options: MQTTOptions, expectedText: String) {
        #expect {
            _ = try MQTTClient(options: options) { _ in }
        } throws: { error in
            (error as? MQTTError)?.message.contains(expectedText) ?? false
        }
    }

    /// The edges of each range are taken when the client is made: port 65 535, a
    /// keep-alive of 5 s and of 65 535 s, a client id of 65 535 bytes, the shortest
    /// reconnect delay (10 ms) and equal delays, a will at QoS 0 and 2 and one of 65 535
    /// bytes, the largest incoming packet of 1 and of 4 294 967 295 bytes over MQTT 5
    /// (its CONNECT properties set, with and without a session kept).
    @Test("the edges of every range are taken", arguments: [
        options { $0.port = 65_535 },
        options { $0.keepAlive = 5 },
        options { $0.keepAlive = 65_535 },
        options { $0.clientID = String(repeating: "g", count: 65_535) },
        options { $0.reconnectDelayMin = 0.01 },
        options { $0.reconnectDelayMin = 2; $0.reconnectDelayMax = 2 },
        options { $0.will = MQTTWill(topic: "geotify/status", payload: [], qos: 0) },
        options { $0.will = MQTTWill(topic: "geotify/status", payload: [], qos: 2) },
        options { $0.will = MQTTWill(topic: "geotify/status", payload: Array(repeating: 0x6F, count: 65_535)) },
        options { $0.protocolVersion = .v5; $0.maximumIncomingPacketBytes = 1 },
        options { $0.protocolVersion = .v5; $0.cleanSession = true; $0.maximumIncomingPacketBytes = 4_294_967_295 },
    ])
    func takesTheEdgesOfEachRange(options: MQTTOptions) throws {
        _ = try MQTTClient(options: options) { _ in }
    }

    @Test("an empty client id is fine with a clean session")
    func emptyIDWithCleanSession() throws {
        var options = MQTTOptions(clientID: "")
        options.cleanSession = true
        _ = try MQTTClient(options: options) { _ in }
    }

    @Test("a CA file that does not exist is reported by start()")
    func missingCAFile() throws {
        var options = MQTTOptions(clientID: "tls-missing-ca", port: 8883)
        options.tls = MQTTTLS(caFile: "/nonexistent/ca.crt")
        let client = try MQTTClient(options: options) { _ in }
        #expect {
            try client.start()
        } throws: { error in
            (error as? MQTTError)?.message.contains("/nonexistent/ca.crt") ?? false
        }
        client.stop()
    }
}
