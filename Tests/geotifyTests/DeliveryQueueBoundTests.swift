import Foundation
import GeotifyMQTT
import GeotifyStore
import GeotifyTestSupport
import Testing

/// A tracker may cause notifications at will, and each was queued for every matching
/// target until delivered: 4 000 positions against a webhook limited to 10 a second left
/// 3 885 deliveries waiting (8.3 MB of state directory), without bound. Through the whole
/// bridge (a real mosquitto, the state database, the delivery worker) on a
/// `ManualScheduler`, against a target that fails (so nothing leaves its queue): one
/// device's flood fills only its own share, every notification past it is published,
/// counted under `delivery_queue_full` and reported on `geotify/error`, the log keeps to
/// its budget, and another device's notifications are still queued.
@Suite("The delivery queue's bound through the bridge", .waiting)
struct DeliveryQueueBoundTests {
    @Test func aTrackersFloodFillsOnlyItsShareOfTheQueue() throws {
        let scenario = try DeliveryScenario("queue-bound", devices: 2)
        let receiver = try TestHTTPServer { _ in TestHTTPServer.Response(status: 503, body: "down for maintenance") }
        defer { receiver.stop() }
        let running = try InProcessDeliveryBridge(
            scenario, "bound", target: DeliveryScenario.webhook("hook", url: receiver.url + "/hook", #""maximumQueuedPerDevice": 5, "maximumQueued": 8"#))
        defer { running.stop() }
        let flooder = scenario.devices[0]
        let other = scenario.devices[1]
        let notifications = 30
        for step in 0...notifications { try scenario.publish(flooder, step: step) }
        for step in 0...2 { try scenario.publish(other, step: step) }
        #expect(waitUntil { scenario.observer.messages.filter { $0.topic.hasPrefix("bound/event/") }.count == notifications + 2 },
                "every notification is published")
        let refused = notifications - 5
        #expect(waitUntil { running.bridge.counters.snapshot["errors.delivery_queue_full"] == refused })
        let queue = try DeliveryQueue(path: scenario.directory.appendingPathComponent("state-bound/state.sqlite").path)
        let counts = try #require(try queue.counts().first)
        #expect(counts.pending + counts.retrying == 5 + 2 && counts.refused == refused)
        #expect(Set(try queue.heads().map(\.entry.eventID)) == [scenario.eventID(flooder, step: 1), scenario.eventID(other, step: 1)],
                "the oldest of each device wait, the newest were refused")
        func reports() -> [MQTTMessage] {
            scenario.observer.messages.filter { $0.topic == "bound/error" && $0.text.contains("delivery_queue_full") }
        }
        #expect(waitUntil { reports().count == refused }, "every refusal reported")
        #expect(reports().allSatisfy { $0.text.contains("5 notifications of \(flooder) are already waiting for hook (maximumQueuedPerDevice)") })
        let count = running.count
        #expect(count("did not queue") == 10)

        for _ in 0..<300 { running.scheduler.advance(by: 0.2) }
        #expect(waitUntil { count("suppressed 15 more queue-full lines") == 1 }, "\(running.lastLines(4))")
        #expect(count("suppressed 15 more queue-full lines in the last 60 s (hook 15); each was counted under errors.delivery_queue_full and reported on bound/error") == 1)
    }
}
