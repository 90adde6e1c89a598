import Foundation
import Testing
@testable import geotify
import GeotifyBridge
import GeotifyJSON
import GeotifyTestSupport

/// `geotify status` as a real process against a real broker holding retained statistics.
@Suite("geotify status", .serialized, .waiting)
struct StatusCommandTests {
    let directory: URL

    init() throws {
        directory = try makeTemporaryDirectory("status")
    }

    static let report = StatsReport(
        time: 1_700_000_000, uptime: 3_661, devices: 2, fences: 3, pending: 0,
        counters: [
            "messages_received": 10, "fixes_evaluated": 8, "transitions": 2, "notifications": 2,
            "errors.invalid_json": 1, "errors.state_write": 3, "fixes_dropped.out_of_order": 1,
        ],
        latency: LatencyHistogram.Summary(count: 8, p50: 0.000_119, p90: 0.0005, p99: 0.001_19, maximum: 0.0013))

    /// A broker holding the retained statistics (and status, when given) under `prefix`.
    func broker(prefix: String = "geotify", status: String? = "online", report: StatsReport = Self.report) throws -> TestBroker {
        let broker = try TestBroker()
        let publisher = try TestClient(port: broker.port)
        let topics = Topics(prefix: prefix)
        if let status { try publisher.publish(topics.status, status, retain: true) }
        let message = report.message(topics: topics)
        try publisher.publish(message.topic, bytes: message.payload, qos: 1, retain: true)
        publisher.disconnect()
        return broker
    }

    @Test func printsTheStatisticsAsATable() throws {
        let broker = try broker()
        let result = try runGeotify(["status", "--broker", broker.url, "--timeout", "20"], in: directory)
        #expect(result.error == "")
        #expect(result.status == 0)
        #expect(result.output == """
            bridge   online
            as of    2023-11-14T22:13:20Z
            uptime   1h 1m 1s
            devices  2
            fences   3
            pending  0

            counters
              fixes_evaluated     8
              messages_received  10
              notifications       2
              transitions         2

            errors
              invalid_json  1
              state_write   3

            fixes_dropped
              out_of_order  1

            latency (ms)
              samples      8
              p50      0.119
              p90        0.5
              p99       1.19
              max        1.3

            """)
    }

    /// A taken-over session is not left as one more number among the errors: a line
    /// says what happened and names the client id of the settings given.
    @Test func aTakenOverSessionIsSpelledOutWithTheClientID() throws {
        var report = Self.report
        report.counters["errors.session_taken_over"] = 3
        let broker = try broker(report: report)
        try #"{"broker": "\#(broker.url)", "clientId": "geotify-north"}"#
            .write(to: directory.appendingPathComponent("settings.json"), atomically: true, encoding: .utf8)
        let result = try runGeotify(["status", "--config", "settings.json", "--timeout", "20"], in: directory)
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("""
            bridge   online
            as of    2023-11-14T22:13:20Z
            uptime   1h 1m 1s
            devices  2
            fences   3
            pending  0

            warning: session taken over 3 times: another client connects with client id "geotify-north" and the broker throws the bridge off; give each bridge its own clientId and let the broker tie client ids to logins (use_username_as_clientid, docs/security.md)

            counters
            """), "\(result.output)")
        #expect(result.output.contains("""
            errors
              invalid_json        1
              session_taken_over  3
              state_write         3
            """))
        #expect(StatusCommand.warnings(Self.report, clientID: "geotify").isEmpty, "no warning without a takeover")
    }

    @Test func printsJSONWithTheSettingsFilePrefix() throws {
        let broker = try broker(prefix: "geo", status: nil)
        try #"{"broker": "\#(broker.url)", "topicPrefix": "geo"}"#
            .write(to: directory.appendingPathComponent("settings.json"), atomically: true, encoding: .utf8)
        let result = try runGeotify(["status", "--config", "settings.json", "--json", "--timeout", "20"], in: directory)
        #expect(result.status == 0)
        let document = try JSONParser().parse(result.output)
        #expect(document["status"] == .null)
        #expect(document["stats"]?["counters"]?["errors"]?["state_write"] == 3)
        #expect(try StatsReport(parsing: Array(JSONWriter().string(#require(document["stats"])).utf8)).counters == Self.report.counters)
    }

    /// A login the broker does not let read the statistics is told so at once, by the
    /// broker's refusal of the subscription (mosquitto's dynamic-security plugin), not
    /// after the timeout as if the bridge published none.
    @Test func aSubscriptionTheBrokerRefusesIsSaidAtOnce() throws {
        let security = try BrokerDynamicSecurity(
            path: directory.appendingPathComponent("dynamic-security.json").path, user: "viewer", password: "secret",
            rules: [.subscribe("#"), .refuseSubscribing("geotify/stats")])
        let broker = try TestBroker(extraConfig: security.brokerConfig)
        try "secret\n".write(to: directory.appendingPathComponent("password"), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.appendingPathComponent("password").path)
        try #"{"broker": "\#(broker.url)", "username": "viewer", "passwordFile": "password"}"#
            .write(to: directory.appendingPathComponent("settings.json"), atomically: true, encoding: .utf8)
        let result = try runGeotify(["status", "--config", "settings.json", "--timeout", "30"], in: directory)
        #expect(result.status == 1)
        #expect(result.error == "geotify: the broker refused the subscription to geotify/stats (SUBACK 0x80); check its ACL\n", "\(result)")
    }

    /// A probe runs `geotify status` in the bridge's container: a message far larger than
    /// the statistics on their topic, which another client could leave retained there, is
    /// not taken whole (over MQTT 3.1.1 it is read without its payload), and said so.
    @Test func statisticsLargerThanTheBridgeTakesAreNotRead() throws {
        let broker = try TestBroker()
        let publisher = try TestClient(port: broker.port)
        try publisher.publish("geotify/stats", bytes: [UInt8](repeating: 0x7B, count: 2_000_000), qos: 1, retain: true)
        let result = try runGeotify(["status", "--broker", broker.url, "--timeout", "20"], in: directory)
        #expect(result.status == 1)
        #expect(result.error == "geotify: the statistics on geotify/stats are 2000000 bytes, more than the bridge takes (327680), so they were not read; another client wrote them there\n", "\(result)")
    }

    /// The same over TLS (the health check of a bridge whose broker takes only TLS): the
    /// statistics are read out of the plaintext's buffer, and ones far too large are cut
    /// there, not taken whole.
    @Test func overTLSTheStatisticsAreReadAndTooLargeOnesAreNot() throws {
        let certificates = try TestCertificates(in: directory.appendingPathComponent("tls"))
        let port = try freePort()
        let broker = try TestBroker(extraConfig: "listener \(port) 127.0.0.1\n" + certificates.brokerConfig)
        let publisher = try TestClient(port: broker.port)
        let message = Self.report.message(topics: Topics(prefix: "geotify"))
        try publisher.publish(message.topic, bytes: message.payload, qos: 1, retain: true)
        try #"{"broker": "mqtts://127.0.0.1:\#(port)", "tls": {"caFile": "\#(certificates.caFile)"}}"#
            .write(to: directory.appendingPathComponent("settings.json"), atomically: true, encoding: .utf8)
        let read = try runGeotify(["status", "--config", "settings.json", "--json", "--timeout", "20"], in: directory)
        #expect(read.status == 0, "\(read)")
        let document = try JSONParser().parse(read.output)
        #expect(try StatsReport(parsing: Array(JSONWriter().string(#require(document["stats"])).utf8)).counters == Self.report.counters)
        try publisher.publish("geotify/stats", bytes: [UInt8](repeating: 0x7B, count: 2_000_000), qos: 1, retain: true)
        let cut = try runGeotify(["status", "--config", "settings.json", "--timeout", "20"], in: directory)
        #expect(cut.status == 1)
        #expect(cut.error == "geotify: the statistics on geotify/stats are 2000000 bytes, more than the bridge takes (327680), so they were not read; another client wrote them there\n", "\(cut)")
    }

    @Test func withoutStatisticsItGivesUpAfterTheTimeout() throws {
        let broker = try TestBroker()
        let publisher = try TestClient(port: broker.port)
        try publisher.publish("geotify/status", "offline", retain: true)
        let result = try runGeotify(["status", "--broker", broker.url, "--timeout", "1"], in: directory)
        #expect(result.status == 1)
        #expect(result.output == "")
        #expect(result.error == "geotify: no statistics on geotify/stats within 1 s (the bridge's status is offline); is the bridge running with statistics on?\n")
    }

    /// A connection that cannot be made ends the command at once with the reason: the
    /// timeout is an hour, so a test that waited for it would not finish.
    @Test func anUnreachableBrokerIsReportedAtOnceWithTheReason() throws {
        let closed = try ClosedPort()
        defer { withExtendedLifetime(closed) {} }
        let url = "mqtt://127.0.0.1:\(closed.port)"
        let result = try runGeotify(["status", "--broker", url, "--timeout", "3600"], in: directory)
        #expect(result.status == 1)
        #expect(result.error == "geotify: cannot reach the broker at \(url): Connection refused (is it running, and on this port?)\n")
    }

    @Test func aRefusedLoginIsReportedAtOnce() throws {
        let passwords = try BrokerPasswordFile(path: directory.appendingPathComponent("passwd").path, users: ["geotify": "right"])
        let broker = try TestBroker(extraConfig: passwords.brokerConfig)
        try #"{"broker": "\#(broker.url)", "username": "geotify", "password": "wrong"}"#
            .write(to: directory.appendingPathComponent("settings.json"), atomically: true, encoding: .utf8)
        let result = try runGeotify(["status", "--config", "settings.json", "--timeout", "3600"], in: directory)
        #expect(result.status == 1)
        #expect(result.error.contains("geotify: the broker at \(broker.url) refused the login: "))
        #expect(result.error.contains("(check username and password, GEOTIFY_MQTT_PASSWORD or passwordFile)\n"))
    }

    @Test func tlsToAPlainBrokerIsReportedAtOnce() throws {
        let broker = try TestBroker()
        let url = "mqtts://127.0.0.1:\(broker.port)"
        let result = try runGeotify(["status", "--broker", url, "--timeout", "3600"], in: directory)
        #expect(result.status == 1)
        #expect(result.error.hasPrefix("geotify: TLS with the broker at \(url) failed: "))
    }

    @Test func onlineFailsUnlessTheBridgeIsOnline() throws {
        let online = try broker()
        #expect(try runGeotify(["status", "--broker", online.url, "--online", "--timeout", "20"], in: directory).status == 0)
        let offline = try broker(status: "offline")
        let result = try runGeotify(["status", "--broker", offline.url, "--online", "--timeout", "20"], in: directory)
        #expect(result.status == 1)
        #expect(result.error == "geotify: the bridge's status on geotify/status is offline, not online\n")
        let unset = try broker(status: nil)
        let none = try runGeotify(["status", "--broker", unset.url, "--online", "--timeout", "20"], in: directory)
        #expect(none.status == 1, "no status is not online either")
        #expect(none.error == "geotify: the bridge's status on geotify/status is not set, not online\n")
    }

    /// The table's first lines, without a broker: the time of the statistics rounded down
    /// to its second; an uptime's units down to seconds once a larger one is given
    /// (`1d 0h 0m 5s`), and one below zero (a clock stepped back) as 0 s; a single
    /// takeover said as "once".
    @Test func theTableSpellsTimesAndDurations() {
        var report = Self.report
        report.time = 1_700_000_000.9
        report.uptime = 86_405
        #expect(StatusCommand.table(report, status: "online", clientID: "g").hasPrefix("bridge   online\nas of    2023-11-14T22:13:20Z\nuptime   1d 0h 0m 5s\n"))
        report.uptime = -3
        #expect(StatusCommand.table(report, status: nil, clientID: "g").hasPrefix("bridge   unknown\nas of    2023-11-14T22:13:20Z\nuptime   0s\n"))
        report.counters["errors.session_taken_over"] = 1
        #expect(StatusCommand.warnings(report, clientID: "g").first?.hasPrefix("session taken over once: another client connects with client id \"g\"") == true)
    }

    @Test func badOptionsAreUsageErrors() throws {
        let timeout = try runGeotify(["status", "--timeout", "0"], in: directory)
        #expect(timeout.status == 2)
        #expect(timeout.error.contains("--timeout must be a number of seconds"))
        let unknown = try runGeotify(["status", "--fences", "x"], in: directory)
        #expect(unknown.status == 2)
        #expect(unknown.error == "geotify: unknown option --fences (see 'geotify status --help')\n")
        let misspelt = try runGeotify(["status", "--timout", "3"], in: directory)
        #expect(misspelt.error == "geotify: unknown option --timout (did you mean --timeout?) (see 'geotify status --help')\n")
        let help = try runGeotify(["status", "--help"], in: directory)
        #expect(help.status == 0)
        #expect(help.output.contains("usage: geotify status"))
    }
}
