import Foundation
import GeotifyStore
import GeotifyTestSupport
import Testing

/// A tracker may cause notifications at will: each position in and out of its fence is
/// one. Every one was a log line, and with a target that refuses them (an answer that is
/// final, such as HTTP 400) a dead letter's error line too: 10 000 positions of one
/// tracker made 19 999 lines, 2.6 MB of log in 7 s. Through the whole bridge (a real
/// mosquitto, the state database, the delivery worker) on a `ManualScheduler`: each
/// kind costs the log 10 lines a device (a target) and one summary a minute, while every
/// notification is still published and every dead letter stored and reported.
@Suite("A tracker's notification flood in the log", .waiting)
struct NotificationFloodLogTests {
    @Test func aFloodOfNotificationsAndDeadLettersCostsTheLogBoundedLines() throws {
        let scenario = try DeliveryScenario("notification-flood", devices: 1)
        let receiver = try TestHTTPServer { _ in TestHTTPServer.Response(status: 400, body: "no such hook") }
        let running = try InProcessDeliveryBridge(scenario, "flood", target: DeliveryScenario.webhook("hook", url: receiver.url + "/hook"))
        defer { running.stop() }
        let device = scenario.devices[0]
        let notifications = 30
        for step in 0...notifications { try scenario.publish(device, step: step) }
        let queue = try DeliveryQueue(path: scenario.directory.appendingPathComponent("state-flood/state.sqlite").path)
        #expect(waitUntil(timeout: 30) { (try? queue.counts().first?.dead) == notifications }, "every one refused by the target")
        #expect(waitUntil { scenario.observer.messages.filter { $0.topic == "flood/event/\(device)" }.count == notifications })
        #expect(waitUntil { scenario.observer.messages.filter { $0.topic == "flood/error" && $0.text.contains("delivery_failed") }.count == notifications },
                "every dead letter reported")
        let count = running.count
        #expect(count("\(device) enter zone") + count("\(device) exit zone") == 10)
        #expect(count("gave up delivering") == 10)
        #expect(count("suppressed") == 0, "not before the minute is over")

        for _ in 0..<300 { running.scheduler.advance(by: 0.2) }
        #expect(waitUntil { count("suppressed") == 2 }, "\(running.lastLines(4))")
        #expect(count("suppressed 20 more notification lines in the last 60 s (\(device) 20); each notification was published on flood/event/<device>") == 1)
        #expect(count("suppressed 20 more dead-letter lines in the last 60 s (hook 20); each is in the dead letters (geotify notify status) and was reported on flood/error") == 1)
    }
}
