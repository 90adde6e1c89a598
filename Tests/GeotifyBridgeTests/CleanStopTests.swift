import Foundation
import GeotifyBridge
import GeotifyTestSupport
import GeotifyTime
import Testing

/// A clean stop leaves `offline` retained on the status topic, whenever it comes: while
/// the bridge is idle, in the middle of a burst of positions, right after the broker
/// accepted its connection, or before it connected at all. Home Assistant marks the
/// bridge's entities unavailable from that retained message; a stop that left `online`
/// retained would show a dead bridge as alive.
///
/// The bridge runs in this process (`Bridge.start()` and `stop()`), which is what
/// `geotify run` does on SIGTERM; in process, a stop can be aimed at an event (the
/// broker logging the connection, the n-th notification of a burst) instead of a guess
/// of how long a process takes to get there, and 50 stops fit in seconds.
/// `scripts/attack` stops real `geotify run` processes with SIGTERM as well. A stop
/// that a stalled broker does not answer gives up after its timeout.
@Suite("Clean stop", .serialized, .waiting)
struct CleanStopTests {
    /// When a round stops the bridge.
    enum Moment: String, CaseIterable {
        /// At a random moment in the first 1.5 ms after `start()` returned, while the
        /// connection is being set up (on this machine it is accepted within about 1 ms):
        /// the stop may come before, while or after the bridge handles the broker's
        /// acceptance. The random delay picks the moment; nothing waits for it to pass.
        case whileConnecting
        /// As soon as the bridge logs that the broker accepted its connection, while it
        /// goes on to subscribe and publish `online` on its network thread.
        case justAfterConnecting
        /// After `online` was published and nothing else is going on.
        case idle
        /// After a random number of the notifications a burst of positions causes.
        case midBurst
    }

    static let weighted: [Moment] = [.whileConnecting, .whileConnecting, .justAfterConnecting, .justAfterConnecting, .idle, .midBurst]

    static let devices = (0..<6).map { "user\($0)/phone" }

    static let fences: String = {
        let entries = devices.enumerated().map { index, device in
            #""\#(device)": [{"identifier": "zone", "latitude": \#(50 + Double(index) / 10), "longitude": 8, "radius": 200, "eventType": "onEntryAndExit"}]"#
        }
        return #"{"devices": {\#(entries.joined(separator: ", "))}}"#
    }()

    @Test(.longWaiting) func fiftyStopsAtRandomMomentsEachLeaveOfflineRetained() throws {
        let broker = try TestBroker()
        let directory = try makeTemporaryDirectory("clean-stop")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fencesURL = directory.appendingPathComponent("fences.json")
        try Self.fences.write(to: fencesURL, atomically: true, encoding: .utf8)
        var settings = Settings()
        settings.broker.port = broker.port
        settings.fencesPath = fencesURL.path
        settings.stateDirectory = directory.appendingPathComponent("state").path
        settings.clientID = "geotify-stop"
        settings.lanes = 2
        let sender = try TestClient(port: broker.port)
        let observer = try TestClient(port: broker.port)
        try observer.subscribe("geotify/event/#")
        let statuses = try TestClient(port: broker.port)
        try statuses.subscribe("geotify/status")
        let logLines = LogLines()
        let base = Int(Date().timeIntervalSince1970) - 3_600
        var step = 0
        var moments: [Moment] = []
        var wrong: [String] = []

        for round in 0..<50 {
            // The first round establishes a retained status; the others pick at random, the
            // moments around the connection (where a stop races the bridge's own `online`)
            // twice as often as the others.
            let moment = round == 0 ? Moment.idle : Self.weighted.randomElement() ?? .idle
            moments.append(moment)
            let online = statuses.messages.filter { $0.text == "online" }.count
            let connected = DispatchSemaphore(value: 0)
            let bridge = Bridge(settings: settings, logger: Logger(level: .info) { line in
                if line.contains("connected to") { connected.signal() }
                if !line.contains(" info ") { logLines.append(line) }
            })
            try bridge.start()
            switch moment {
            case .whileConnecting:
                let moment = ContinuousClock.now + .microseconds(Int.random(in: 0...1_500))
                while ContinuousClock.now < moment {}
            case .justAfterConnecting:
                #expect(connected.wait(timeout: .now() + 10) == .success)
            case .idle:
                #expect(waitUntil { statuses.messages.filter { $0.text == "online" }.count > online })
            case .midBurst:
                #expect(waitUntil { statuses.messages.filter { $0.text == "online" }.count > online })
                observer.clear()
                for _ in 0..<40 {
                    step += 1
                    for (index, device) in Self.devices.enumerated() {
                        let latitude = 50 + Double(index) / 10 - (step % 2 == 0 ? 0.045 : 0)
                        try sender.publish("owntracks/\(device)", #"{"_type":"location","lat":\#(latitude),"lon":8,"acc":5,"tst":\#(base + step)}"#, qos: 0)
                    }
                }
                let notifications = Int.random(in: 1...100)
                #expect(waitUntil { observer.messages.count >= notifications })
            }
            bridge.stop()
            let status = retainedStatus(port: broker.port)
            if status != "offline" { wrong.append("round \(round) (\(moment.rawValue)): \(status ?? "nothing")") }
        }
        #expect(wrong.isEmpty, "stops that did not leave offline retained: \(wrong)")
        #expect(Set(moments).count == Moment.allCases.count, "every kind of moment was tried: \(moments.map(\.rawValue))")
        #expect(!logLines.all.contains { $0.contains("did not acknowledge") }, "every offline was acknowledged: \(logLines.all)")
    }

    /// A bridge let go while it runs, in the middle of a burst of positions, stops at
    /// once: its client's callbacks, which reach it without a reference of their own,
    /// are ignored from then on and waited for, and the connection ends so that the
    /// broker publishes the will (`offline`).
    @Test func aBridgeLetGoWhileRunningStopsAndLeavesItsWill() throws {
        let broker = try TestBroker()
        defer { broker.kill() }
        let under = try BridgeUnderTest(port: broker.port, clientID: "geotify-let-go")
        let observer = try BrokerObserver(port: broker.port, subscribe: ["geotify/status"])
        var bridge: Bridge? = Bridge(settings: under.settings, logger: Logger(level: .error, sink: { _ in }), scheduler: SystemScheduler())
        try bridge?.start()
        #expect(waitUntil { observer.messages(under: "geotify/status").last?.text == "online" })
        let tracker = try TestClient(port: broker.port)
        let base = Int(Date().timeIntervalSince1970)
        try tracker.publishAll((0..<2_000).map { index in
            ("owntracks/walker/phone", #"{"_type":"location","lat":52.52,"lon":13.405,"tst":\#(base + index)}"#)
        })
        bridge = nil
        #expect(waitUntil { observer.messages(under: "geotify/status").last?.text == "offline" },
                "\(observer.messages(under: "geotify/status").map(\.text))")
    }

    /// A stop whose `offline` the broker does not acknowledge gives up after its timeout,
    /// timed on the monotonic clock (the bridge's own clock here is a test's that never
    /// moves, and would keep it waiting for ever), says so, and still leaves `offline`
    /// to the subscribers once the broker reads again.
    /// The wait for the broker's acknowledgement lasts its timeout on the monotonic clock,
    /// not less (the lower bound only, as below), and ends at once when signalled.
    @Test func theStopsWaitLastsItsTimeoutOnTheMonotonicClock() {
        for _ in 0..<20 {
            let started = ContinuousClock.now
            #expect(!Bridge.wait(for: DispatchSemaphore(value: 0), seconds: 0.02))
            let took = ContinuousClock.now - started
            #expect(took >= .milliseconds(20), "\(took)")
        }
        let signalled = DispatchSemaphore(value: 0)
        signalled.signal()
        #expect(Bridge.wait(for: signalled, seconds: 60))
        #expect(!Bridge.wait(for: DispatchSemaphore(value: 0), seconds: 0))
    }

    @Test func aStopGivesUpWaitingForTheBrokerAfterItsTimeout() throws {
        let broker = try TestBroker()
        defer { broker.kill() }
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-stalled", clock: clock)
        let observer = try BrokerObserver(port: broker.port, subscribe: ["geotify/status"])
        try bridge.start()
        #expect(waitUntil { observer.messages(under: "geotify/status").last?.text == "online" })
        broker.pause()
        let started = ContinuousClock.now
        bridge.bridge?.stop(timeout: 0.5)
        let took = ContinuousClock.now - started
        // Only the lower bound: it waited its timeout. No test asserts how long something
        // took at most (a loaded machine decides that), so a timeout ten times too long
        // is not caught here (docs/testing.md).
        #expect(took >= .milliseconds(500), "\(took)")
        #expect(bridge.logged("did not acknowledge").count == 1, "\(bridge.logLines.all)")
        broker.resume()
        #expect(waitUntil { observer.messages(under: "geotify/status").last?.text == "offline" },
                "\(observer.messages(under: "geotify/status").map(\.text))")
    }

    /// A stop whose `offline` the broker never acknowledges leaves without a DISCONNECT:
    /// the connection just ends, so that a broker publishes the will (`offline`), where a
    /// DISCONNECT would make it drop the will and keep `online` retained. The broker here
    /// reads everything and answers nothing but the CONNECT (`SilentBroker`), so the test
    /// sees every packet the bridge sent.
    @Test func aStopTheBrokerNeverAcknowledgesEndsTheConnectionWithoutADisconnect() throws {
        let broker = try SilentBroker()
        defer { broker.stop() }
        let bridge = try BridgeUnderTest(port: broker.port, clientID: "geotify-unanswered")
        try bridge.start()
        #expect(waitUntil { !bridge.logged("connected to").isEmpty }, "\(bridge.logLines.all)")
        bridge.bridge?.stop(timeout: 0.2)
        #expect(bridge.logged("did not acknowledge").count == 1, "\(bridge.logLines.all)")
        #expect(waitUntil { broker.isClosed })
        let types = broker.packetTypes
        #expect(types.first == 1, "a CONNECT first: \(types)")
        #expect(types.filter { $0 == 3 }.count >= 2, "online and offline published: \(types)")
        #expect(!types.contains(14), "no DISCONNECT: \(types)")
    }

    /// A connection that ends with an error during a stop (its DISCONNECT could not be
    /// sent within the stop's grace, `MQTTClientWillTests`) is not followed by a
    /// reconnection: the warning says the stop ended it uncleanly, with the client's
    /// reason (that the broker publishes the will), where before it said "reconnecting".
    @Test func aConnectionEndedWhileStoppingIsNotSaidToReconnect() {
        let reason = "The DISCONNECT could not be sent (no room to write it within 2 s of the stop), so the broker publishes the will"
        #expect(Bridge.connectionEnded(broker: "mqtt://b:1883", reason: reason, stopping: true, connectedOnce: true)
            == "stopping without a clean disconnect from mqtt://b:1883: the DISCONNECT could not be sent (no room to write it within 2 s of the stop), so the broker publishes the will")
        #expect(Bridge.connectionEnded(broker: "mqtt://b:1883", reason: "Connection lost.", stopping: false, connectedOnce: true)
            == "lost the connection to the broker mqtt://b:1883: connection lost; reconnecting")
        #expect(Bridge.connectionEnded(broker: "mqtt://b:1883", reason: "Connection refused", stopping: false, connectedOnce: false)
            == "cannot reach the broker mqtt://b:1883: connection refused; retrying")
    }

    /// The status retained at the broker now, as a new subscriber receives it; nil when
    /// none is retained.
    private func retainedStatus(port: Int) -> String? {
        guard let client = try? TestClient(port: port) else { return nil }
        defer { client.disconnect() }
        guard (try? client.subscribe("geotify/status")) != nil else { return nil }
        return client.waitForMessage(on: "geotify/status", timeout: 2)?.text
    }
}
