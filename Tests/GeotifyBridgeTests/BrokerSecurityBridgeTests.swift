import Foundation
import GeotifyBridge
import GeotifyMQTT
import GeotifyTestSupport
import GeotifyTime
import Testing

/// The bridge against brokers that demand TLS or a password, end to end through a real
/// mosquitto with certificates made by `openssl` and passwords by `mosquitto_passwd`.
@Suite("Bridge with TLS and passwords", .serialized, .timeLimit(.minutes(1)), .waiting)
struct BrokerSecurityBridgeTests {
    let base = Int(Date().timeIntervalSince1970) - 3_600

    @Test func overTLSTheBridgeVerifiesTheBrokerWithTheConfiguredCA() throws {
        let directory = try makeTemporaryDirectory("tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try TestCertificates(in: directory)
        let broker = try TestBroker(extraConfig: certificates.brokerConfig)
        let trusted = MQTTTLS(caFile: certificates.caFile)
        let observer = try BrokerObserver(port: broker.port, subscribe: ["geotify/#"]) { $0.tls = trusted }

        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-tls") { settings in
            settings.broker = BrokerAddress(host: "127.0.0.1", port: broker.port, tls: true)
            settings.security.tls = trusted
            settings.security.protocolVersion = .v5
        }
        try bridge.start()
        #expect(waitUntil { observer.messages(under: "geotify/status").last?.text == "online" }, "\(bridge.logLines.all)")
        try observer.publish("owntracks/walker/phone", location(52.50, 13.405, tst: 0))
        try observer.publish("owntracks/walker/phone", location(52.52, 13.405, tst: 10))
        #expect(waitUntil { observer.notificationIDs()["walker/phone"] == ["walker/phone/home/enter/\(base + 10)"] })
        #expect(bridge.logged("connected to mqtts://127.0.0.1:\(broker.port)").count == 1)
    }

    @Test func overTLSABrokerCertificateTheBridgeCannotVerifyIsRefused() throws {
        let directory = try makeTemporaryDirectory("tls-untrusted")
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificates = try TestCertificates(in: directory)
        let broker = try TestBroker(extraConfig: certificates.brokerConfig)
        // No CA configured: the system's CAs, which do not include the test CA.
        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-untrusted") { settings in
            settings.broker = BrokerAddress(host: "127.0.0.1", port: broker.port, tls: true)
        }
        // The handshake fails in start() or, a moment later, on the network thread;
        // either way with OpenSSL's reason, and never connected.
        do {
            try bridge.start()
            #expect(waitUntil { !bridge.logged("certificate verify failed").isEmpty }, "\(bridge.logLines.all)")
        } catch {
            #expect("\(error)".contains("certificate verify failed"), "\(error)")
        }
        #expect(bridge.logged("connected to").isEmpty)
        #expect(!broker.log.contains("New client connected"))
    }

    @Test func withAPasswordFileTheBridgeLogsIn() throws {
        let directory = try makeTemporaryDirectory("password")
        defer { try? FileManager.default.removeItem(at: directory) }
        let passwords = try BrokerPasswordFile(
            path: directory.appendingPathComponent("passwd").path,
            users: ["geotify": "bridge-secret", "tracker": "tracker-secret"])
        let broker = try TestBroker(extraConfig: passwords.brokerConfig)
        let secret = directory.appendingPathComponent("mqtt-password")
        try "bridge-secret\n".write(to: secret, atomically: true, encoding: .utf8)
        chmod(secret.path, 0o600)
        let observer = try BrokerObserver(port: broker.port, subscribe: ["geotify/#"]) {
            $0.username = "tracker"
            $0.password = "tracker-secret"
        }

        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-password") { settings in
            settings.security.username = "geotify"
            settings.security.passwordFile = secret.path
        }
        try bridge.start()
        #expect(waitUntil { observer.messages(under: "geotify/status").last?.text == "online" }, "\(bridge.logLines.all)")
        try observer.publish("geotify/location/van/7", #"{"lat":48.0,"lon":11.0,"acc":5,"tst":\#(base)}"#)
        try observer.publish("geotify/location/van/7", #"{"lat":48.1374,"lon":11.5755,"acc":5,"tst":\#(base + 10)}"#)
        #expect(waitUntil { observer.notificationIDs()["van/7"] == ["van/7/depot/enter/\(base + 10)"] })
        #expect(bridge.logLines.all.allSatisfy { !$0.contains("bridge-secret") }, "the password is never logged")
    }

    /// A broker whose access rules refuse the bridge one of its inputs (here the
    /// OwnTracks filter: a mistake in its ACL, after which no phone's position would
    /// arrive): the refusal is counted (`errors.subscription_refused`) and logged as an
    /// error saying where to look, and the bridge's other inputs work on. (mosquitto's
    /// dynamic-security plugin: an `acl_file` never refuses a subscription.) The line
    /// names the filter refused, and over MQTT 5 the broker's reason.
    @Test(arguments: [
        (MQTTProtocolVersion.v311, "the broker refused the subscription to owntracks/+/+ (SUBACK 0x80); check its ACL"),
        (.v5, "the broker refused the subscription to owntracks/+/+: not authorized (MQTT v5 reason 0x87); check its ACL"),
    ])
    func anInputTheBrokerRefusesIsCountedAndLoggedAndTheOthersWorkOn(version: MQTTProtocolVersion, line: String) throws {
        let directory = try makeTemporaryDirectory("acl-refused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = try Self.restrictedBridge(in: directory, version: version, refusing: .refuseSubscribing("owntracks/+/+"))
        let bridge = try #require(harness.bridge)
        defer { harness.stopBridge() }
        #expect(waitUntil { bridge.counters.value(.errors(.subscriptionRefused)) == 1 }, "\(harness.logLines.all.suffix(10))")
        // Counted before it is logged: the line is waited for.
        #expect(waitUntil { harness.logLines.all.contains { $0.hasSuffix("error   " + line) } }, "\(harness.logLines.all.suffix(10))")
        try harness.observer.publish("geotify/location/van/7", #"{"lat": 48.0, "lon": 11.0, "tst": \#(harness.base)}"#)
        try harness.observer.publish("geotify/location/van/7", #"{"lat": 48.1374, "lon": 11.5755, "acc": 20, "tst": \#(harness.base + 300)}"#)
        #expect(harness.events("van/7", count: 1).first?["event"] as? String == "enter", "the plain location topic works on")
    }

    /// Other MQTT 5 refusals are not the ACL's: the line gives the broker's reason and
    /// no hint about access rules; a subscription whose filter is not known is named so.
    @Test func aRefusalNotOfTheACLGivesNoHintAboutIt() {
        #expect(Bridge.subscriptionRefused(filter: "owntracks/+/+", code: 0xA2, version: .v5)
            == "the broker refused the subscription to owntracks/+/+: wildcard Subscriptions not supported (MQTT v5 reason 0xA2)")
        #expect(Bridge.subscriptionRefused(filter: nil, code: 0x80, version: .v311) == "the broker refused a subscription (SUBACK 0x80); check its ACL")
    }

    /// An MQTT 5 broker whose access rules refuse the bridge one of its outputs (here the
    /// notifications: a mistake in its ACL, after which no automation would hear of an
    /// entry) says so in each PUBACK: every refusal is counted
    /// (`errors.publish_refused`) and logged as an error naming the topic and where to
    /// look, the message is not retried, and the bridge's other outputs work on. Before,
    /// the refusal was taken as a delivery and nothing said why no notification came.
    @Test func anOutputTheBrokerRefusesIsCountedAndLoggedAndTheOthersWorkOn() throws {
        let directory = try makeTemporaryDirectory("publish-refused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = try Self.restrictedBridge(in: directory, version: .v5, refusing: .refusePublishing("geotify/event/#"))
        let bridge = try #require(harness.bridge)
        defer { harness.stopBridge() }
        try harness.observer.publish("geotify/location/van/7", #"{"lat": 48.0, "lon": 11.0, "tst": \#(harness.base)}"#)
        try harness.observer.publish("geotify/location/van/7", #"{"lat": 48.1374, "lon": 11.5755, "acc": 20, "tst": \#(harness.base + 300)}"#)
        #expect(waitUntil { bridge.counters.value(.errors(.publishRefused)) == 1 }, "\(harness.logLines.all.suffix(10))")
        #expect(waitUntil {
            harness.logLines.all.contains {
                $0.hasSuffix("error   the broker refused the message published to geotify/event/van/7: not authorized (MQTT v5 reason 0x87); it is not delivered; do the broker's access rules let the bridge's login publish there?")
            }
        }, "\(harness.logLines.all.suffix(10))")
        #expect(waitUntil { harness.badge("van/7") == "1" }, "the badge, on a topic the broker takes, is published")
        #expect(waitUntil { bridge.outboundDrained }, "the refused message is not waited for, nor sent again")
        #expect(bridge.counters.value(.errors(.publishRefused)) == 1)
    }

    /// A bridge speaking `version`, started with the login `geotify` on a broker whose
    /// dynamic-security plugin (configured in `directory`) lets it subscribe and publish
    /// to everything but what `refusal` refuses.
    static func restrictedBridge(
        in directory: URL, version: MQTTProtocolVersion, refusing refusal: BrokerDynamicSecurity.Rule
    ) throws -> BridgeHarness {
        let security = try BrokerDynamicSecurity(
            path: directory.appendingPathComponent("dynamic-security.json").path, user: "geotify", password: "bridge-secret",
            rules: [.subscribe("#"), .publish("#"), refusal])
        let harness = try BridgeHarness(start: false, brokerConfig: security.brokerConfig) {
            $0.security.protocolVersion = version
            $0.security.username = "geotify"
            $0.security.password = "bridge-secret"
        }
        try harness.startBridge()
        return harness
    }

    @Test func aWrongPasswordIsLoggedOnceAndRetriedWithBackoffNotInATightLoop() throws {
        let directory = try makeTemporaryDirectory("wrong-password")
        defer { try? FileManager.default.removeItem(at: directory) }
        let passwords = try BrokerPasswordFile(
            path: directory.appendingPathComponent("passwd").path, users: ["geotify": "right"])
        let broker = try TestBroker(extraConfig: passwords.brokerConfig)
        // The retries wait on the test's clock: all the bridge has scheduled on it is its
        // housekeeping tick, and a retry while one waits.
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-wrong", clock: clock) { settings in
            settings.security.username = "geotify"
            settings.security.password = "wrong"
        }
        try bridge.start()

        // The first attempt at once; each retry once the clock has passed its back-off,
        // which lies between half its ceiling and the ceiling (1 s, then 2 s): never
        // sooner, so never a tight loop. A back-off counts from where the clock stood when
        // the bridge handled the refusal before it, which need not be where the test last
        // moved the clock to: an attempt runs on its network thread while the test's
        // advance goes on through housekeeping ticks, and may be refused and its retry
        // scheduled before that advance ends.
        let retryWaiting = { clock.pendingCount == 2 }
        // The retry is the run on the clock that waits longer than a tick (0.2 s).
        let retry = { clock.waiting.first { $0.delay > 0.2 } }
        // What a failure needs to be read: the clock, what waits on it, both logs.
        let seen = { "refused \(broker.refusedLogins), waiting on the clock at \(clock.uptime) s: \(clock.waiting); bridge: \(bridge.logLines.all); broker: \(broker.log)" }
        #expect(waitUntil { broker.refusedLogins >= 1 && retryWaiting() }, "\(seen())")
        for (attempt, ceiling) in [(2, 1.0), (3, 2.0)] {
            let scheduled = try #require(retry(), "the retry for attempt \(attempt): \(seen())").scheduled
            clock.advance(by: scheduled + ceiling / 2 - 0.01 - clock.uptime)
            #expect(broker.refusedLogins == attempt - 1 && retryWaiting(), "attempt \(attempt) before \(ceiling / 2) s of the clock: \(seen())")
            clock.advance(by: scheduled + ceiling + 0.01 - clock.uptime)
            #expect(waitUntil { broker.refusedLogins >= attempt && retryWaiting() }, "attempt \(attempt) by \(ceiling) s of the clock: \(seen())")
        }

        let refusedLines = bridge.logged("refused the connection")
        #expect(refusedLines.count == 1, "\(bridge.logLines.all)")
        #expect(refusedLines.first?.contains("not authorised") == true, "\(refusedLines)")
        #expect(bridge.bridge?.counters.value(.errors(.connectionRefused)) == 1)
    }

    /// An OwnTracks location at `base + tst`, accurate to 5 m.
    private func location(_ latitude: Double, _ longitude: Double, tst: Int) -> String {
        #"{"_type":"location","lat":\#(latitude),"lon":\#(longitude),"acc":5,"tst":\#(base + tst)}"#
    }
}
