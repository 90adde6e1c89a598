import Foundation
import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyMQTT
import GeotifyStore
import GeotifyTestSupport
import GeotifyTime

/// The sweep of stale retained topics at a start, through a real mosquitto: what fences
/// and devices removed while the bridge was stopped left retained is cleared, and nothing
/// else.
@Suite("Retained sweep through mosquitto", .serialized, .waiting)
struct RetainedSweepBridgeTests {
    /// The fences in force: Alice's gym, Carol and the shared mall are gone.
    static let fences = """
        { "devices": { "alice/phone": [
              { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntryAndExit" } ] },
          "shared": [
            { "identifier": "office", "latitude": 52.5163, "longitude": 13.3777, "radius": 150, "eventType": "onEntryAndExit" } ] }
        """

    @Test func aStartClearsTheRetainedTopicsOfRemovedFencesAndDevicesAndNothingElse() throws {
        let harness = try BridgeHarness(fences: Self.fences, start: false)
        let discovery = HomeAssistantDiscovery(topics: Topics())
        let gym = try #require(FenceFile(path: "old.json").parse(Array("""
            { "devices": { "x": [
              { "identifier": "gym", "latitude": 52.53, "longitude": 13.41, "radius": 100, "eventType": "onEntryAndExit" },
              { "identifier": "work", "latitude": 52.50, "longitude": 13.40, "radius": 100, "eventType": "onEntryAndExit" },
              { "identifier": "mall", "latitude": 52.51, "longitude": 13.37, "radius": 100, "eventType": "onEntryAndExit" } ] } }
            """.utf8)).book).fences(of: "x")
        var stale: [(topic: String, payload: [UInt8])] = [
            ("geotify/presence/alice/phone/gym", Array("inside".utf8)),
            ("geotify/presence/carol/phone/work", Array("outside".utf8)),
            ("geotify/presence/carol/phone/office", Array("outside".utf8)),
            ("geotify/state/carol/phone", Array("{}".utf8)),
            ("geotify/tracker/carol/phone", Array("not_home".utf8)),
            ("geotify/badge/carol/phone", Array("2".utf8)),
            ("geotify/occupancy/shared/mall", Array("1".utf8)),
        ]
        var configs = Array(discovery.configs(device: "alice/phone", fences: [gym[0]]).suffix(1))
        configs += discovery.configs(device: "carol/phone", fences: [gym[1]])
        configs += discovery.configs(owner: "shared", fences: [gym[2]])
        stale += configs.map { ($0.topic, $0.payload) }
        let live: [(topic: String, payload: [UInt8])] = [
            ("geotify/presence/alice/phone/home", Array("outside".utf8)),
            ("geotify/presence/alice/phone/office", Array("outside".utf8)),
            ("geotify/occupancy/shared/office", Array("0".utf8)),
            ("geotify/presence/alice", Array("odd".utf8)),
            ("geotify/state/alice//phone", Array("odd".utf8)),
            ("homeassistant/sensor/zigbee_1/badge/config", Array(#"{"state_topic":"geotify/badge/carol/phone"}"#.utf8)),
        ]
        let seeder = try TestClient(port: harness.broker.port)
        defer { seeder.disconnect() }
        for (topic, payload) in stale + live { try seeder.publish(topic, bytes: payload, qos: 1, retain: true) }
        try harness.observer.subscribe("homeassistant/#")

        try harness.startBridge()
        let bridge = try #require(harness.bridge)
        defer { harness.stopBridge() }
        for (topic, _) in stale {
            #expect(harness.observer.waitForMessage(on: topic, where: { $0.payload.isEmpty && !$0.retain }) != nil, "\(topic) cleared")
        }
        #expect(waitUntil { bridge.counters.value(.sweepCleared) == stale.count })
        #expect(bridge.counters.value(.sweepSkipped) == 0)

        // What a new subscriber is given: the live topics as they were, none of the stale.
        let retained = try Self.retained(at: harness.broker.port)
        for (topic, payload) in live {
            #expect(retained[topic] == payload, "\(topic) kept")
        }
        for (topic, _) in stale {
            #expect(retained[topic] == nil, "\(topic) gone")
        }
        for (topic, _) in live {
            #expect(!harness.observer.messages.contains { $0.topic == topic && $0.payload.isEmpty }, "\(topic) never cleared")
        }
        // Swept once, and the subscriptions ended: a stale topic retained now stays.
        try seeder.publish("geotify/presence/alice/phone/late", bytes: Array("inside".utf8), qos: 1, retain: true)
        #expect(waitUntil { harness.logLines.all.contains { $0.contains("clearing those the fences in force no longer account for") } })
        #expect(try Self.retained(at: harness.broker.port)["geotify/presence/alice/phone/late"] == Array("inside".utf8))
        #expect(bridge.counters.value(.sweepCleared) == stale.count)
        #expect(bridge.counters.value(.messagesUnrouted) == 0, "no message of the sweep's was routed as input")
    }

    /// A device removed from the fence file while the bridge was stopped: its state was
    /// saved while the file named it, so the start forgets it, and its retained topics
    /// are empty and stay so through the connections that follow, while `zz/1`, which the
    /// file never named, keeps its last values. Its state used to be loaded as that of a
    /// device without fences, published again at each connection and kept by the sweep.
    @Test func aDeviceRemovedWhileTheBridgeWasStoppedIsNotRetainedAgain() throws {
        let harness = try BridgeHarness { $0.lanes = 1 }
        try harness.ownTracks("alice/phone", 52.52, 13.405, tst: 3_500)
        try harness.ownTracks("zz/1", 52.52, 13.405, tst: 3_500)
        for device in ["alice/phone", "zz/1"] {
            #expect(harness.observer.waitForMessage(on: "geotify/state/\(device)", where: { !$0.payload.isEmpty }) != nil, "\(device)'s state")
        }
        harness.stopBridge()
        let vanOnly = BridgeHarness.fences.replacingOccurrences(
            of: #"(?s)"alice/phone": \[.*?\],\s*"van/7""#, with: #""van/7""#, options: .regularExpression)
        try vanOnly.write(to: harness.fencesURL, atomically: true, encoding: .utf8)
        for start in 1...2 {
            let seen = harness.observer.messages.count
            try harness.startBridge()
            // zz/1 is republished after the connection, in the tick that would have
            // republished Alice before it (one lane, devices in identifier order).
            #expect(waitUntil { harness.observer.messages.dropFirst(seen).contains { $0.topic == "geotify/state/zz/1" && !$0.payload.isEmpty } })
            let alices = harness.observer.messages.dropFirst(seen).filter { $0.topic.hasSuffix("/alice/phone") || $0.topic.contains("/alice/phone/") }
            #expect(alices.allSatisfy { $0.payload.isEmpty }, "start \(start): nothing of Alice but empty messages: \(alices.map(\.topic))")
            // The presence of a fence Alice was announced with but her state keeps no entry
            // of (outside `office`) is the sweep's to clear, once it has read the topics.
            #expect(waitUntil { (try? Self.retained(at: harness.broker.port))?.keys.allSatisfy { !$0.contains("alice/phone") } == true },
                    "start \(start): \((try? Self.retained(at: harness.broker.port))?.keys.sorted() ?? [])")
            #expect(try Self.retained(at: harness.broker.port)["geotify/state/zz/1"]?.isEmpty == false)
            harness.stopBridge()
            #expect(try StateStore(directory: harness.stateDirectory).loadDevices().keys.sorted() == ["zz/1"])
        }
        #expect(harness.logLines.all.filter { $0.contains("forgot 1 device the fence file does not name (alice/phone)") }.count == 1)
    }

    /// A broker whose access rules refuse the bridge's user two of the sweep's filters,
    /// `geotify/state/#` and `geotify/occupancy/+/+` (mosquitto's dynamic-security
    /// plugin: an `acl_file` never refuses a subscription). The sweep ends with the
    /// acknowledgements, not at its 30 s fallback; what is stale under the filters it may
    /// read is cleared, and nothing under those it may not is touched, though Carol's
    /// state and the mall's count are as stale as her tracker and badge. Each refusal is a
    /// warning counted in `sweep_refused`, not `errors.subscription_refused`, and
    /// positions are evaluated and notified as usual.
    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func filtersTheBrokerRefusesAreLeftAloneAndTheRestIsSwept(version: MQTTProtocolVersion) throws {
        let directory = try makeTemporaryDirectory("sweep-refused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let refused = ["geotify/state/#", "geotify/occupancy/+/+"]
        let security = try BrokerDynamicSecurity(
            path: directory.appendingPathComponent("dynamic-security.json").path, user: "geotify", password: "bridge-secret",
            rules: [.subscribe("#"), .publish("#")] + refused.map { .refuseSubscribing($0) })
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(start: false, clock: clock, brokerConfig: security.brokerConfig) {
            $0.security.username = "geotify"
            $0.security.password = "bridge-secret"
            $0.security.protocolVersion = version
        }
        let stale = ["geotify/presence/alice/phone/gym", "geotify/tracker/carol/phone", "geotify/badge/carol/phone"]
        let unread = ["geotify/state/carol/phone": "{}", "geotify/occupancy/shared/mall": "1"]
        let seeder = try TestClient(port: harness.broker.port)
        defer { seeder.disconnect() }
        for topic in stale { try seeder.publish(topic, "x", qos: 1, retain: true) }
        for (topic, payload) in unread { try seeder.publish(topic, payload, qos: 1, retain: true) }

        try harness.startBridge()
        let bridge = try #require(harness.bridge)
        defer { harness.stopBridge() }
        // The refused filters' SUBACKs, the last of them the last filter's: mosquitto has
        // sent what the others hold before it.
        #expect(waitUntil { bridge.counters.value(.sweepRefused) == refused.count }, "\(harness.logLines.all.suffix(20))")
        #expect(waitUntil(advancing: clock, by: RetainedCollection.settle / 2) { bridge.sweepHasCollected })
        #expect(clock.uptime < RetainedCollection.phaseTimeout, "ended by the acknowledgements, not the fallback")
        for topic in stale {
            #expect(harness.observer.waitForMessage(on: topic, where: { $0.payload.isEmpty }) != nil, "\(topic) cleared")
        }
        #expect(waitUntil { bridge.counters.value(.sweepCleared) == stale.count })
        for filter in refused {
            #expect(harness.logLines.all.contains { $0.contains("refused the subscription to \(filter) (its access rules; sweep_refused)") })
        }
        #expect(bridge.counters.value(.errors(.subscriptionRefused)) == 0, "the bridge's input subscriptions were granted")

        try harness.ownTracks("alice/phone", 52.50, 13.405, tst: 10)
        try harness.ownTracks("alice/phone", 52.52, 13.405, tst: 20)
        #expect(harness.events("alice/phone", count: 1).first?["event"] as? String == "enter")
        let retained = try Self.retained(at: harness.broker.port)
        for (topic, payload) in unread {
            #expect(retained[topic] == Array(payload.utf8), "\(topic) kept")
            #expect(!harness.observer.messages.contains { $0.topic == topic && $0.payload.isEmpty }, "\(topic) never cleared")
        }
        #expect(bridge.counters.value(.sweepCleared) == stale.count)
        #expect(bridge.counters.value(.sweepRefused) == refused.count)
    }

    /// More retained topics the bridge still owns than its sweep keeps (a bound of 10
    /// here, 50 000 in production) come before the stale ones: the last values of the 12
    /// devices of a group and of Alice, those of `zz/1`, which the file does not name but
    /// whose state the bridge keeps, and two topics of another program's, all under the
    /// filters subscribed first. Only the 25 stale badges (removed devices, under the last
    /// device filter) count toward the bound, so each start clears 10 of them, the broker
    /// then holds 10 fewer, and the third start clears the last 5; the live topics are
    /// never cleared. The sweep used to count every retained message toward the bound and
    /// end there, so it met the same live topics first at every start and never reached a
    /// stale one.
    @Test func staleTopicsBehindMoreLiveOnesThanTheBoundAreClearedOverStarts() throws {
        let fleet = (0..<12).map { "fleet/\($0)" }
        let fences = """
            { "devices": { "alice/phone": [
                  { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "eventType": "onEntryAndExit" } ] },
              "groups": { "fleet": [\(fleet.map { "\"\($0)\"" }.joined(separator: ", "))] },
              "shared": [
                { "identifier": "depot", "latitude": 48.1374, "longitude": 11.5755, "radius": 250, "eventType": "onEntry", "group": "fleet" } ] }
            """
        let harness = try BridgeHarness(fences: fences, sweepBound: 10) { $0.lanes = 1 }
        try harness.ownTracks("alice/phone", 52.52, 13.405, tst: 3_500)
        try harness.ownTracks("zz/1", 52.52, 13.405, tst: 3_500)
        for device in ["alice/phone", "zz/1"] {
            #expect(harness.observer.waitForMessage(on: "geotify/badge/\(device)", where: { !$0.payload.isEmpty }) != nil, "\(device)'s badge")
        }
        harness.stopBridge()

        let seeder = try TestClient(port: harness.broker.port)
        defer { seeder.disconnect() }
        var live = fleet.flatMap { ["geotify/state/\($0)", "geotify/presence/\($0)/depot"] }
        live += ["geotify/state/fleet//odd", "geotify/state/\(String(repeating: "x", count: 300))"]
        for topic in live { try seeder.publish(topic, "x", qos: 1, retain: true) }
        let stale = (0..<25).map { "geotify/badge/gone/\($0)" }
        for topic in stale { try seeder.publish(topic, "1", qos: 1, retain: true) }
        live += ["alice/phone", "zz/1"].flatMap { device in DeviceTopic.allCases.filter { $0 != .presence }.map { "geotify/\($0.rawValue)/\(device)" } }
        live.append("geotify/presence/alice/phone/home")
        let before = try Self.retained(at: harness.broker.port)
        #expect(live.allSatisfy { before[$0] != nil }, "\(live.filter { before[$0] == nil })")

        for (start, (cleared, skipped)) in [(10, 15), (10, 5), (5, 0)].enumerated() {
            let earlierLines = harness.logLines.all.count
            try harness.startBridge()
            let bridge = try #require(harness.bridge)
            #expect(waitUntil { bridge.counters.value(.sweepCleared) == cleared }, "start \(start + 1): \(bridge.counters.value(.sweepCleared)) cleared")
            // The stale topics past the bound come after the collection ended; the sweep's
            // end tells how many. Only this start's lines: an earlier start's "15 more"
            // holds "5 more".
            if skipped > 0 {
                #expect(waitUntil {
                    harness.logLines.all.dropFirst(earlierLines).contains { $0.contains(" \(skipped) more stale retained topics") }
                })
            }
            #expect(bridge.counters.value(.sweepSkipped) == skipped, "start \(start + 1)")
            // What was skipped is what the broker still holds once the clears are in.
            #expect(waitUntil { (try? Self.retained(at: harness.broker.port))?.keys.filter { $0.hasPrefix("geotify/badge/gone/") }.count == skipped })
            harness.stopBridge()
        }
        let after = try Self.retained(at: harness.broker.port)
        #expect(live.allSatisfy { after[$0] != nil }, "\(live.filter { after[$0] == nil })")
        #expect(!harness.observer.messages.contains { live.contains($0.topic) && $0.payload.isEmpty }, "no live topic was ever cleared")
    }

    /// Every retained message under `geotify/#` and `homeassistant/#` a new subscriber is
    /// given: what the broker sends before a message the subscriber publishes afterwards.
    /// Throws, saying which step failed, when it cannot tell (an empty answer would read
    /// as every retained topic gone).
    static func retained(at port: Int) throws -> [String: [UInt8]] {
        let late = try TestClient(port: port)
        defer { late.disconnect() }
        let barrier = "geotify/barrier/\(UUID().uuidString)"
        try late.subscribe("geotify/#")
        try late.subscribe("homeassistant/#")
        try late.publish(barrier, "end")
        guard late.waitForMessage(on: barrier) != nil else {
            throw TestSupportError("the late subscriber's own message on \(barrier) did not come back within 10 s")
        }
        var found: [String: [UInt8]] = [:]
        for message in late.messages where message.retain { found[message.topic] = message.payload }
        return found
    }
}
