import Foundation
import GeotifyBridge
import GeotifyMQTT
import GeotifyTestSupport
import GeotifyTime
import Testing

/// The bridge across a broker restart: a persistent broker is restarted while devices
/// cross fences, and the notifications that come out must be those of a run that was
/// never interrupted, nothing lost and nothing extra (repeats, which at-least-once
/// delivery allows, are recognised by their id).
@Suite("Bridge across a broker restart", .serialized, .timeLimit(.minutes(2)), .waiting)
struct BrokerRestartTests {
    /// Over MQTT 3.1.1 and MQTT 5 (whose session outlives the connection only by the
    /// Session Expiry Interval the bridge asks for).
    @Test(arguments: [MQTTProtocolVersion.v311, .v5])
    func transitionsAcrossABrokerRestartEqualThoseOfAnUninterruptedRun(version: MQTTProtocolVersion) throws {
        let track = CrossingTrack(base: Int(Date().timeIntervalSince1970) - 3_600, fixesPerDevice: 40)

        let restarted = try TestBroker(persistence: true)
        // The bridge reconnects after its back-off on the test's clock, moved on only once
        // every position is published: they all wait in its session at the broker.
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let bridge = try BridgeUnderTest(port: restarted.port, clientID: "geotify-restarted", clock: clock) {
            $0.security.protocolVersion = version
        }
        let observer = try BrokerObserver(port: restarted.port, subscribe: ["geotify/event/#"])
        let tracker = try BrokerObserver(port: restarted.port, subscribe: [])

        let steady = try TestBroker()
        let reference = try BridgeUnderTest(port: steady.port, clientID: "geotify-reference")
        let referenceObserver = try BrokerObserver(port: steady.port, subscribe: ["geotify/event/#"])
        let referenceTracker = try TestClient(port: steady.port)

        try bridge.start()
        try reference.start()
        #expect(try bridge.waitUntilOnline(port: restarted.port) && reference.waitUntilOnline(port: steady.port))

        // The broker goes down and comes back in the middle of the stream; the positions
        // after it are published while the bridge is still reconnecting (the tracker
        // retries until its own connection is back), so they wait in the bridge's session.
        for (index, fix) in track.fixes.enumerated() {
            if index == track.fixes.count / 3 {
                try restarted.restart()
            }
            try tracker.publish(fix.topic, fix.payload)
            try referenceTracker.publish(fix.topic, fix.payload)
        }
        #expect(restarted.log.components(separatedBy: " running").count - 1 == 2, "the broker was restarted")

        let expected = track.expectedNotificationIDs
        #expect(expected.values.map(\.count).reduce(0, +) == 2 * (track.fixesPerDevice - 1))
        let complete = waitUntil(advancing: clock, by: 1, timeout: 30) {
            observer.notificationIDs() == expected && referenceObserver.notificationIDs() == expected
        }
        #expect(complete, "bridge log: \(bridge.logLines.all.suffix(20))")
        #expect(observer.notificationIDs() == referenceObserver.notificationIDs())
        #expect(observer.notificationIDs() == expected)
        #expect(!bridge.logged("connected to").isEmpty && bridge.logged("lost the connection").count >= 1)
    }

    /// A device's retained topics are last values at QoS 0: after the bridge reconnects,
    /// it publishes them again from its state, so a broker that came back without its
    /// retained messages (no persistence) has them again with no new position.
    @Test func afterReconnectingTheBridgePublishesTheRetainedLastValuesAgain() throws {
        let broker = try TestBroker()
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-republish", clock: clock)
        let tracker = try BrokerObserver(port: broker.port, subscribe: [])
        try bridge.start()
        #expect(try bridge.waitUntilOnline(port: broker.port))
        let now = Int(Date().timeIntervalSince1970)
        try tracker.publish("owntracks/walker/phone", #"{"_type":"location","lat":52.52,"lon":13.405,"acc":5,"tst":\#(now)}"#)
        let before = try BrokerObserver(port: broker.port, subscribe: ["geotify/presence/walker/phone/home"])
        #expect(before.events.waitFor { event -> Bool? in
            if case .message(let message) = event, message.payload == Array("inside".utf8) { return true }
            return nil
        } == true, "the first position's presence, retained")

        try broker.restart()
        #expect(broker.log.components(separatedBy: " running").count - 1 == 2, "the broker was restarted")
        // The bridge's back-off runs on the test's clock; its ticks republish a share of
        // the devices each.
        #expect(waitUntil(advancing: clock, by: 1, timeout: 30) { bridge.logged("connected to").count >= 2 }, "reconnected")
        let filters = ["geotify/presence/walker/phone/home", "geotify/state/walker/phone"]
        // Both as they are published again (or, if that came first, as retained)...
        let after = try BrokerObserver(port: broker.port, subscribe: filters)
        let republished = waitUntil(advancing: clock, by: 1, timeout: 30) { Self.showsHome(after, retained: false) }
        #expect(republished, "the broker lost its retained messages; the bridge published them again: \(after.events.all.suffix(5))")
        // ...and retained by the broker for whoever subscribes next.
        let later = try BrokerObserver(port: broker.port, subscribe: filters)
        #expect(waitUntil { Self.showsHome(later, retained: true) }, "retained: \(later.events.all.suffix(5))")
    }

    /// A device removed from the fence file while the bridge runs is forgotten: its
    /// retained topics, emptied when the file changed, stay empty after the bridge
    /// reconnects to a broker that lost its retained messages, while a device that is
    /// kept (`zz/1`, without fences, republished in the same tick after walker/phone)
    /// has its last values again. The lane used to keep the removed device's state and
    /// publish its last values again at each connection.
    @Test func aDeviceRemovedFromTheFileIsNotRetainedAgainAfterReconnecting() throws {
        let broker = try TestBroker()
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-removed", clock: clock) { $0.lanes = 1 }
        let tracker = try BrokerObserver(port: broker.port, subscribe: [])
        let walker = try BrokerObserver(port: broker.port, subscribe: ["geotify/state/walker/phone"])
        try bridge.start()
        #expect(try bridge.waitUntilOnline(port: broker.port))
        let now = Int(Date().timeIntervalSince1970)
        try tracker.publish("owntracks/walker/phone", #"{"_type":"location","lat":52.52,"lon":13.405,"acc":5,"tst":\#(now)}"#)
        try tracker.publish("owntracks/zz/1", #"{"_type":"location","lat":52.52,"lon":13.405,"acc":5,"tst":\#(now)}"#)
        #expect(walker.events.waitFor { event -> Bool? in
            if case .message(let message) = event, !message.payload.isEmpty { return true }
            return nil
        } == true, "walker/phone's state, retained")

        let vanOnly = BridgeUnderTest.fences.replacingOccurrences(
            of: #"(?s)"walker/phone": \[.*?\],\s*"van/7""#, with: #""van/7""#, options: .regularExpression)
        try vanOnly.write(toFile: bridge.settings.fencesPath, atomically: true, encoding: .utf8)
        #expect(waitUntil(advancing: clock, by: 0.5) {
            walker.messages(under: "geotify/state/walker/phone").last?.payload.isEmpty == true
        }, "emptied once the file stopped naming walker/phone: \(bridge.logLines.all.suffix(5))")
        #expect(bridge.bridge?.fenceBook.knows("walker/phone") == false)

        try broker.restart()
        #expect(waitUntil(advancing: clock, by: 1, timeout: 30) { bridge.logged("connected to").count >= 2 }, "reconnected")
        // walker/phone's topics first, then zz/1's: the broker sends what it holds for
        // each subscription in order, and the lane republished walker/phone (if at all)
        // before zz/1.
        let filters = ["geotify/state/walker/phone", "geotify/tracker/walker/phone", "geotify/badge/walker/phone", "geotify/state/zz/1"]
        let after = try BrokerObserver(port: broker.port, subscribe: filters)
        #expect(waitUntil(advancing: clock, by: 0.2, timeout: 30) { !after.messages(under: "geotify/state/zz/1").isEmpty }, "zz/1 republished")
        let later = try BrokerObserver(port: broker.port, subscribe: filters)
        #expect(waitUntil { later.messages(under: "geotify/state/zz/1").contains(where: \.retain) }, "zz/1 retained")
        // No last value of walker/phone again. An empty message may still come: the
        // clears of its topics go out one after another, and those the restart caught on
        // their way are sent once the bridge is back (they keep the topics empty).
        for observer in [after, later] {
            let removed = observer.events.messages.filter { $0.topic.contains("walker/phone") && !$0.payload.isEmpty }
            #expect(removed.isEmpty, "nothing of walker/phone again: \(removed.map(\.topic))")
        }
    }

    /// Whether `observer` got walker/phone's presence `inside` home and a state document
    /// whose tracker says `home` (both with the retain flag, when `retained`).
    private static func showsHome(_ observer: BrokerObserver, retained: Bool) -> Bool {
        let presence = observer.messages(under: "geotify/presence/walker/phone/home")
        let state = observer.messages(under: "geotify/state/walker/phone")
        return presence.contains { $0.payload == Array("inside".utf8) && ($0.retain || !retained) }
            && state.contains { String(decoding: $0.payload, as: UTF8.self).contains(#""tracker":"home""#) && ($0.retain || !retained) }
    }
}

/// Two devices crossing their fences over and over, with accurate fixes 10 s apart
/// (starting an hour ago, so none is too old): `walker/phone` (OwnTracks) goes away,
/// home, away, work, away, home, ...; `van/7` (plain JSON) goes away, depot, away, ...
/// Every fix after a device's first crosses a fence edge by kilometres, so each is
/// exactly one transition and, with every fence notifying on entry and exit, one
/// notification whose id is known in advance.
private struct CrossingTrack {
    struct Fix {
        let topic: String
        let payload: String
    }

    let fixesPerDevice: Int
    private(set) var fixes: [Fix] = []
    private(set) var expectedNotificationIDs: [String: [String]] = [:]

    init(base: Int, fixesPerDevice: Int) {
        self.fixesPerDevice = fixesPerDevice
        let away = (52.50, 13.405)
        let walkerStops: [(String?, (Double, Double))] = [
            (nil, away), ("home", (52.52, 13.405)), (nil, away), ("work", (52.53, 13.40)),
        ]
        let vanStops: [(String?, (Double, Double))] = [(nil, (48.0, 11.0)), ("depot", (48.1374, 11.5755))]
        for index in 0..<fixesPerDevice {
            let tst = base + 10 * index
            let (walkerFence, walker) = walkerStops[index % walkerStops.count]
            fixes.append(Fix(
                topic: "owntracks/walker/phone",
                payload: #"{"_type":"location","lat":\#(walker.0),"lon":\#(walker.1),"acc":5,"tst":\#(tst)}"#))
            let (vanFence, van) = vanStops[index % vanStops.count]
            fixes.append(Fix(
                topic: "geotify/location/van/7", payload: #"{"lat":\#(van.0),"lon":\#(van.1),"acc":5,"tst":\#(tst)}"#))
            guard index > 0 else { continue }
            let previousWalker = walkerStops[(index - 1) % walkerStops.count].0
            let walkerEvent = walkerFence.map { ($0, "enter") } ?? previousWalker.map { ($0, "exit") }
            if let (fence, event) = walkerEvent {
                expectedNotificationIDs["walker/phone", default: []].append("walker/phone/\(fence)/\(event)/\(tst)")
            }
            let previousVan = vanStops[(index - 1) % vanStops.count].0
            let vanEvent = vanFence.map { ($0, "enter") } ?? previousVan.map { ($0, "exit") }
            if let (fence, event) = vanEvent {
                expectedNotificationIDs["van/7", default: []].append("van/7/\(fence)/\(event)/\(tst)")
            }
        }
    }
}
