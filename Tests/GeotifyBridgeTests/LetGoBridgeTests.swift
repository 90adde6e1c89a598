import Dispatch
import Foundation
@testable import GeotifyBridge
import GeotifyDelivery
import GeotifyJSON
import GeotifyTestSupport
import GeotifyTime
import Synchronization
import Testing

/// A bridge let go while one of its workers is at work is not kept by that worker. The
/// workers' callbacks (the delivery worker's, the lanes', the publisher's and the web
/// console's) hold the bridge's reports (`BridgeReports`), and the housekeeping timer its
/// `Housekeeper`, never the bridge: one that held it, even weakly (a weak reference is
/// made strong for the call), could hold its last reference, and the bridge's `deinit`
/// would then run on that worker's thread and wait there for the worker itself (a `sync`
/// on the queue it runs on, which traps and ends the process).
///
/// Each test holds a worker inside a log line it writes, lets go of the bridge on a
/// thread of its own, and sees the bridge's `deinit` begin (a weak reference to it reads
/// nil) while the worker is still held; then lets the worker go on and sees the stop end.
@Suite("A bridge let go", .serialized, .waiting)
struct LetGoBridgeTests {
    @Test func aBridgeLetGoWhileItsDeliveryWorkerReportsIsNotKeptByTheWorker() throws {
        let broker = try TestBroker()
        defer { broker.kill() }
        // A webhook nothing listens for, whose notifications are not tried again: the
        // first attempt fails and makes a dead letter, which the worker reports.
        let target = try ClosedPort()
        let notify = try DeliverySettings(
            parsing: try JSONParser().parse(#"""
                {"retryFor": 0, "targets": [{"name": "hook", "type": "webhook", "url": "http://127.0.0.1:\#(target.port)/hook",
                                             "secret": {"env": "HOOK_SECRET"}}]}
                """#),
            file: "geotify.json", environment: ["HOOK_SECRET": "s3cret"])
        let under = try BridgeUnderTest(port: broker.port, clientID: "geotify-let-go-worker") { $0.notify = notify }
        let status = try BrokerObserver(port: broker.port, subscribe: ["geotify/status"])
        let gate = LogGate(holding: "gave up delivering")
        // Errors only: the lines the network thread writes as it handles the positions
        // (the transitions, at the info level) would wait behind the held worker.
        let logger = Logger(level: .error, sink: gate.write)
        // A clock the test does not move: no housekeeping round runs, so only the
        // delivery worker is at work.
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let reference = LastReference(Bridge(settings: under.settings, logger: logger, scheduler: clock))
        weak let watched = reference.bridge.withLock { $0 }
        try reference.bridge.withLock { try $0?.start() }
        #expect(waitUntil { status.messages(under: "geotify/status").last?.text == "online" })
        let tracker = try TestClient(port: broker.port)
        defer { tracker.disconnect() }
        let base = Int(clock.now)
        for (index, (latitude, longitude)) in [(52.0, 13.0), (52.52, 13.405)].enumerated() {
            try tracker.publish("owntracks/walker/phone", #"{"_type":"location","lat":\#(latitude),"lon":\#(longitude),"tst":\#(base + index)}"#)
        }
        try #require(gate.waitUntilHolding(), "the worker reported: \(gate.lines)")
        let letGo = reference.letGoOnAThreadOfItsOwn()
        let deinitBegan = waitUntil { watched == nil }
        gate.open()
        #expect(deinitBegan, "the worker held inside its report kept the bridge")
        #expect(letGo.wait(timeout: .now() + 30) == .success)
        #expect(waitUntil { status.messages(under: "geotify/status").last?.text == "offline" },
                "\(status.messages(under: "geotify/status").map(\.text))")
    }
}

extension LetGoBridgeTests {
    /// The housekeeping round held inside the reminder it logs while the broker does not
    /// answer (a broker stopped with SIGSTOP: the connection is made, its CONNECT never
    /// answered), on the clock the test moves from a thread of its own.
    @Test func aBridgeLetGoWhileItsHousekeepingRoundRunsIsNotKeptByTheRound() throws {
        let broker = try TestBroker()
        defer {
            broker.resume()
            broker.kill()
        }
        broker.pause()
        let under = try BridgeUnderTest(port: broker.port, clientID: "geotify-let-go-round")
        let gate = LogGate(holding: "still waiting for the broker")
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let reference = LastReference(Bridge(settings: under.settings, logger: Logger(level: .warning, sink: gate.write), scheduler: clock))
        weak let watched = reference.bridge.withLock { $0 }
        try reference.bridge.withLock { try $0?.start() }
        let advanced = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            clock.advance(by: 31)
            advanced.signal()
        }
        try #require(gate.waitUntilHolding(), "the round reminded: \(gate.lines)")
        let letGo = reference.letGoOnAThreadOfItsOwn()
        let deinitBegan = waitUntil { watched == nil }
        gate.open()
        #expect(deinitBegan, "the round held inside its reminder kept the bridge: \(gate.lines)")
        #expect(letGo.wait(timeout: .now() + 30) == .success, "the stop ended")
        #expect(advanced.wait(timeout: .now() + 30) == .success, "the clock's rounds ended")
    }
}

/// The only reference to a bridge, to let go of on a thread of its own.
private final class LastReference: Sendable {
    let bridge: Mutex<Bridge?>

    init(_ bridge: Bridge) {
        self.bridge = Mutex(bridge)
    }

    /// Lets go of the bridge on a new thread; the semaphore is signalled when that has
    /// ended (with the bridge's `deinit`, unless another thread held it then).
    func letGoOnAThreadOfItsOwn() -> DispatchSemaphore {
        let ended = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            self.bridge.withLock { $0 = nil }
            ended.signal()
        }
        return ended
    }
}
