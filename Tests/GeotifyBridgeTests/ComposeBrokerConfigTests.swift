import Foundation
import GeotifyMQTT
import GeotifyTestSupport
import Testing

/// The broker of the Compose files as shipped: `docker/mosquitto-init` makes the users
/// (with `SHARDS=3`, as docker-compose.cluster.yml runs it) and `docker/mosquitto.conf`
/// starts with them (paths moved into a temporary directory). Client ids are pinned to
/// user names, so a shard's session is its own, and each health check user reads only
/// its own shard's status.
@Suite("Compose broker configuration", .serialized, .timeLimit(.minutes(1)), .waiting)
struct ComposeBrokerConfigTests {
    @Test func clientIDsArePinnedToUserNamesAndEachHealthUserReadsItsOwnShard() throws {
        let broker = try ComposeBroker(shards: 3)
        defer { broker.stop() }
        let shard = try BrokerObserver(
            port: broker.port, subscribe: ["owntracks/#"], clientID: "geotify-1", configure: broker.login("geotify-1"))
        // Another login asking for the shard's client id gets its own user name instead.
        _ = try BrokerObserver(port: broker.port, subscribe: [], clientID: "geotify-1", configure: broker.login("geotify-2"))
        #expect(waitUntil { broker.log.contains(" as geotify-2 (") }, "\(broker.log)")
        #expect(!broker.log.contains("already connected"), "\(broker.log)")
        #expect(!shard.events.all.contains { if case .disconnected = $0 { return true } else { return false } }, "\(shard.events.all)")

        try shard.publish("geotify/shard/0/status", "online 0")
        try shard.publish("geotify/shard/1/status", "online 1")
        let health = try BrokerObserver(
            port: broker.port, subscribe: ["geotify/shard/+/status", "geotify/shard/1/stats"],
            configure: broker.login("geotify-health-1"))
        try shard.publish("geotify/shard/0/status", "online 0 again")
        try shard.publish("geotify/shard/1/status", "online 1 again")
        try shard.publish("geotify/shard/1/stats", "stats 1")
        #expect(waitUntil { health.events.messages.count >= 2 }, "\(broker.log)")
        #expect(health.events.messages.map(\.text) == ["online 1 again", "stats 1"])
    }

    @Test func aShardWithoutItsACLBlockIsRefusedAtTheFirstStart() throws {
        let directory = try makeTemporaryDirectory("compose-broker")
        let result = try ComposeBroker.initialise(secrets: directory, shards: 4)
        #expect(result.status != 0)
        #expect(result.output.contains("has no \"user geotify-3\" block"), "\(result.output)")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("passwd").path))
    }
}

/// mosquitto running `docker/mosquitto.conf` on a free 127.0.0.1 port, with the users,
/// passwords and ACL `docker/mosquitto-init` makes in a temporary directory.
private final class ComposeBroker {
    let port: Int
    private let secrets: URL
    private let broker: ShippedBrokerProcess

    /// The repository, three levels above this file.
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs docker/mosquitto-init into `secrets` for `shards` shards, as this process's
    /// user; its exit status and output.
    static func initialise(secrets: URL, shards: Int) throws -> (status: Int32?, output: String) {
        let output = secrets.appendingPathComponent("init.out")
        var environment = ProcessInfo.processInfo.environment
        environment["SECRETS"] = secrets.path
        environment["ACL"] = root.appendingPathComponent("config/mosquitto.acl").path
        environment["SHARDS"] = "\(shards)"
        environment["MOSQUITTO_UID"] = "\(getuid())"
        environment["GEOTIFY_UID"] = "\(getuid())"
        let process = try ChildProcess(
            executable: "sh", arguments: [root.appendingPathComponent("docker/mosquitto-init").path],
            environment: environment, outputFile: output)
        guard process.waitForExit(timeout: 30) else {
            process.terminate(signal: SIGKILL)
            throw TestSupportError("docker/mosquitto-init did not finish")
        }
        return (process.exitCode, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    init(shards: Int) throws {
        let directory = try makeTemporaryDirectory("compose-broker")
        secrets = directory.appendingPathComponent("secrets")
        try FileManager.default.createDirectory(at: secrets, withIntermediateDirectories: true)
        let initialised = try Self.initialise(secrets: secrets, shards: shards)
        guard initialised.status == 0 else {
            throw TestSupportError("docker/mosquitto-init failed: \(initialised.output)")
        }
        let secrets = secrets
        let started = try ShippedBrokerProcess.onFreePorts(
            1, config: "docker/mosquitto.conf",
            moves: { ports in [
                ("listener 1883", "listener \(ports[0]) 127.0.0.1"),
                ("password_file /run/geotify/passwd", "password_file \(secrets.path)/passwd"),
                ("acl_file /run/geotify/acl", "acl_file \(secrets.path)/acl"),
                ("persistence_location /mosquitto/data/", "persistence_location \(directory.path)/"),
            ] },
            logLine: "log_dest stdout", in: directory)
        broker = started.broker
        port = started.ports[0]
    }

    /// Options that log in as `user` with the password mosquitto-init made for it.
    func login(_ user: String) -> (inout MQTTOptions) -> Void {
        let password = (try? String(contentsOf: secrets.appendingPathComponent("\(user).password"), encoding: .utf8)) ?? ""
        return { options in
            options.username = user
            options.password = password.trimmingCharacters(in: .newlines)
        }
    }

    /// What mosquitto logged.
    var log: String { broker.log }

    /// Stops mosquitto and removes the directory.
    func stop() { broker.stop() }
}
