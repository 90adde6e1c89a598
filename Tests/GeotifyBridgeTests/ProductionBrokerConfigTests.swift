import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import Testing

/// `config/mosquitto.conf` and `config/mosquitto.acl` as shipped: mosquitto starts with
/// them (their paths moved into a temporary directory), and the ACL lets each client do
/// what docs/production.md says and no more: trackers publish only their own positions, only
/// named clients publish commands, nobody gets in without a password.
@Suite("Production broker configuration", .serialized, .timeLimit(.minutes(1)), .waiting)
struct ProductionBrokerConfigTests {
    /// Options that log in as `user` with the test password.
    func login(_ user: String) -> (inout MQTTOptions) -> Void {
        { options in
            options.username = user
            options.password = ProductionBroker.password
        }
    }

    @Test func theShippedConfigLoadsAndItsACLKeepsEveryClientToItsTopics() throws {
        let broker = try ProductionBroker()
        defer { broker.stop() }
        let geotify = try BrokerObserver(
            port: broker.port, subscribe: ["owntracks/#", "geotify/location/#", "geotify/cmd/#"],
            clientID: "geotify", configure: login("geotify"))
        let alice = try BrokerObserver(port: broker.port, subscribe: [], configure: login("alice"))
        let admin = try BrokerObserver(port: broker.port, subscribe: [], configure: login("geotify-admin"))

        // What is refused is dropped by the broker; a permitted marker published after it
        // by the same client shows that it would have arrived by then.
        try alice.publish("owntracks/bob/phone", "spoofed")
        try alice.publish("geotify/location/bob/gps", "spoofed")
        try alice.publish("geotify/cmd/alice/phone", "command from a tracker")
        try alice.publish("owntracks/alice/phone", "own position")
        try alice.publish("geotify/location/alice/gps", "own plain position")
        try admin.publish("geotify/cmd/alice/phone", "command from the admin")
        #expect(waitUntil { geotify.events.messages.count >= 3 }, "\(broker.log)")
        let received = geotify.events.messages.map { "\($0.topic) \($0.text)" }
        #expect(received == [
            "owntracks/alice/phone own position",
            "geotify/location/alice/gps own plain position",
            "geotify/cmd/alice/phone command from the admin",
        ])

        // Over TLS, with the CA that signed the broker's certificate.
        let overTLS = try BrokerObserver(port: broker.tlsPort, subscribe: [], configure: { options in
            login("alice")(&options)
            options.tls = MQTTTLS(caFile: broker.certificates.caFile)
        })
        try overTLS.publish("owntracks/alice/watch", "over TLS")
        #expect(waitUntil { geotify.events.messages.contains { $0.text == "over TLS" } })

        // No password, no entry.
        let anonymous = EventRecorder()
        var options = MQTTOptions(clientID: "anonymous", port: broker.port)
        options.cleanSession = true
        let client = try MQTTClient(options: options, onEvent: anonymous.record)
        try client.start()
        defer { client.stop() }
        let refusal = anonymous.waitFor { event -> String? in
            if case .connectionRefused(_, let reason) = event { return reason }
            return nil
        }
        #expect(refusal?.contains("not authorised") == true, "\(anonymous.all)")
    }

    /// Any tracker credential used to be able to connect as client id `geotify`, close
    /// the bridge's connection and, with a clean session, destroy its queued positions.
    /// The shipped config ties client ids to user names, so the intruder is only alice.
    @Test func noOtherLoginCanTakeTheBridgesClientID() throws {
        let broker = try ProductionBroker()
        defer { broker.stop() }
        let geotify = try BrokerObserver(port: broker.port, subscribe: ["owntracks/#"], clientID: "geotify", configure: login("geotify"))
        let intruder = try BrokerObserver(port: broker.port, subscribe: [], clientID: "geotify") { options in
            login("alice")(&options)
            options.cleanSession = true
        }
        try intruder.publish("owntracks/alice/phone", "after the intruder connected")
        #expect(waitUntil { geotify.events.messages.contains { $0.text == "after the intruder connected" } }, "\(broker.log)")
        #expect(!geotify.events.all.contains { if case .disconnected = $0 { return true } else { return false } }, "\(geotify.events.all)")
        #expect(!broker.log.contains("already connected"), "\(broker.log)")
        #expect(broker.log.contains(" as alice ("), "mosquitto knows the intruder by her user name: \(broker.log)")
    }

    /// Shards of one deployment log in as geotify-0, geotify-1 ...: as one user they would
    /// get one client id and disconnect each other. Each has the topics the bridge needs.
    @Test func eachShardLogsInAsItsOwnUserWithTheBridgesTopics() throws {
        let broker = try ProductionBroker()
        defer { broker.stop() }
        let shards = try (0..<3).map { index in
            try BrokerObserver(
                port: broker.port, subscribe: ["owntracks/#", "geotify/location/#", "geotify/cmd/#"],
                clientID: "geotify-\(index)", configure: login("geotify-\(index)"))
        }
        let homeAssistant = try BrokerObserver(
            port: broker.port, subscribe: ["geotify/shard/#", "homeassistant/#", "owntracks/+/+/cmd"], configure: login("homeassistant"))
        let alice = try BrokerObserver(port: broker.port, subscribe: [], configure: login("alice"))
        let admin = try BrokerObserver(port: broker.port, subscribe: [], configure: login("geotify-admin"))

        try alice.publish("owntracks/alice/phone", "position")
        try alice.publish("geotify/location/alice/gps", "plain position")
        try admin.publish("geotify/cmd/alice/phone", "command")
        for (index, shard) in shards.enumerated() {
            #expect(waitUntil { shard.events.messages.count >= 3 }, "\(broker.log)")
            #expect(shard.events.messages.map(\.text) == ["position", "plain position", "command"], "shard \(index)")
        }
        for (index, shard) in shards.enumerated() {
            try shard.publish("geotify/shard/\(index)/status", "online \(index)")
            try shard.publish("homeassistant/device_tracker/shard\(index)/config", "discovery \(index)")
            try shard.publish("owntracks/alice/phone/cmd", "waypoints \(index)")
        }
        #expect(waitUntil { homeAssistant.events.messages.count >= 9 }, "\(broker.log)")
        #expect(Set(homeAssistant.events.messages.map(\.text)) == Set((0..<3).flatMap { ["online \($0)", "discovery \($0)", "waypoints \($0)"] }))
        for shard in shards {
            #expect(!shard.events.all.contains { if case .disconnected = $0 { return true } else { return false } }, "\(shard.events.all)")
        }
        #expect(!broker.log.contains("already connected"), "\(broker.log)")
    }
}

/// mosquitto running `config/mosquitto.conf` with its listeners on free 127.0.0.1 ports
/// and its files in a temporary directory: a password file made with mosquitto_passwd
/// for the ACL's users, certificates made with openssl, the ACL as shipped.
private final class ProductionBroker {
    static let password = "production-test"

    let port: Int
    let tlsPort: Int
    let certificates: TestCertificates
    private let broker: ShippedBrokerProcess

    init() throws {
        let directory = try makeTemporaryDirectory("production")
        certificates = try TestCertificates(in: directory.appendingPathComponent("certs"))
        let passwords = try BrokerPasswordFile(
            path: directory.appendingPathComponent("passwd").path,
            users: Dictionary(uniqueKeysWithValues: ["geotify", "geotify-0", "geotify-1", "geotify-2", "geotify-admin", "homeassistant", "alice", "bob"].map { ($0, Self.password) }))
        let acl = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/mosquitto.acl")
        let certificates = certificates
        let started = try ShippedBrokerProcess.onFreePorts(
            2, config: "config/mosquitto.conf",
            moves: { ports in [
                ("listener 1883 127.0.0.1", "listener \(ports[0]) 127.0.0.1"),
                ("listener 8883", "listener \(ports[1]) 127.0.0.1"),
                ("password_file /etc/mosquitto/passwd", "password_file \(passwords.path)"),
                ("acl_file /etc/mosquitto/geotify.acl", "acl_file \(acl.standardized.path)"),
                ("cafile /etc/mosquitto/certs/ca.crt", "cafile \(certificates.caFile)"),
                ("certfile /etc/mosquitto/certs/server.crt", "certfile \(certificates.certFile)"),
                ("keyfile /etc/mosquitto/certs/server.key", "keyfile \(certificates.keyFile)"),
                ("persistence_location /var/lib/mosquitto/", "persistence_location \(directory.path)/"),
            ] },
            logLine: "log_dest syslog", in: directory)
        broker = started.broker
        port = started.ports[0]
        tlsPort = started.ports[1]
    }

    /// What mosquitto logged.
    var log: String { broker.log }

    /// Stops mosquitto and removes the directory.
    func stop() { broker.stop() }
}
