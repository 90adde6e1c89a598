import Foundation
@testable import GeotifyBridge
import GeotifyMQTT
import GeotifyStore
import GeotifyTestSupport
import Testing

/// While the state database cannot be written (a full disk, made real with `prlimit
/// --fsize` on the running bridge, as `DiskFullTests` does), each lane keeps what it could
/// not commit in memory and commits it with the next batch that can be. The deliveries it
/// keeps were without bound: a tracker hopping in and out of its fence during the outage
/// added one a notification. Now they keep to their target's `DeliveryBound` in memory
/// too: the newest past it are refused as the queue refuses them (counted, reported on
/// `geotify/error` as `delivery_queue_full`), and once the disk can be written the held
/// ones are queued and the store's bound holds for the rest. The bound holds for all the
/// lanes together (`HeldDeliveries`).
@Suite("Deliveries held while the disk is full", .serialized, .waiting)
struct DiskFullDeliveryTests {
    @Test func deliveriesHeldInMemoryKeepToTheirTargetsBound() throws {
        let scenario = try DeliveryScenario("disk-deliveries", devices: 1)
        let receiver = try TestHTTPServer { _ in TestHTTPServer.Response(status: 503, body: "down for maintenance") }
        defer { receiver.stop() }
        let bridge = try scenario.startBridge(
            "full", extra: DeliveryScenario.notify(DeliveryScenario.webhook("hook", url: receiver.url + "/hook", #""maximumQueuedPerDevice": 3"#)))
        let pid = try #require(bridge.child?.pid)
        let device = scenario.devices[0]
        func events() -> Int { scenario.observer.messages.filter { $0.topic == "full/event/\(device)" }.count }
        func errors(_ code: String) -> [MQTTMessage] {
            scenario.observer.messages.filter { $0.topic == "full/error" && $0.text.contains(#""error":"\#(code)""#) }
        }

        try runCommand("prlimit", ["--pid", "\(pid)", "--fsize=100:unlimited"])
        let outage = 8
        for step in 0...outage { try scenario.publish(device, step: step) }
        #expect(waitUntil { events() == outage }, "every notification is published while nothing can be saved")
        #expect(waitUntil { !errors("state_write").isEmpty }, "the failure is reported")
        #expect(waitUntil { errors("delivery_queue_full").count == outage - 3 }, "the newest past the bound are refused in memory")
        #expect(errors("delivery_queue_full").allSatisfy {
            $0.text.contains("3 notifications of \(device) are already waiting for hook (maximumQueuedPerDevice)")
        })

        try runCommand("prlimit", ["--pid", "\(pid)", "--fsize=unlimited:unlimited"])
        try scenario.publish(device, step: outage + 1)
        #expect(waitUntil { bridge.log.contains("the state database can be written again") })
        #expect(waitUntil { errors("delivery_queue_full").count == outage - 2 }, "the store's bound refuses the next")
        bridge.kill(SIGTERM)
        let queue = try DeliveryQueue(path: bridge.statePath)
        let counts = try #require(try queue.counts().first)
        #expect(counts.pending + counts.retrying == 3, "the three held during the outage were queued after it")
        #expect(counts.refused == outage - 2, "those refused in memory are counted in the database too")
        #expect(try queue.heads().map(\.entry.eventID) == [scenario.eventID(device, step: 1)], "the oldest wait, in order")
    }

    /// Two devices on the two lanes: the target's `maximumQueued` of 3 bounds what both
    /// lanes hold together, not 3 on each (which held 6 of the 16 notifications).
    @Test func deliveriesHeldInMemoryKeepToTheirTargetsBoundAcrossTheLanes() throws {
        let scenario = try DeliveryScenario("disk-lanes", devices: 4)
        let receiver = try TestHTTPServer { _ in TestHTTPServer.Response(status: 503, body: "down for maintenance") }
        defer { receiver.stop() }
        let bridge = try scenario.startBridge(
            "lanes", extra: DeliveryScenario.notify(DeliveryScenario.webhook("hook", url: receiver.url + "/hook", #""maximumQueued": 3"#)))
        let pid = try #require(bridge.child?.pid)
        // `BridgeProcess` runs two lanes.
        let devices = try [0, 1].map { lane in
            try #require(scenario.devices.first { MessageRouter.lane(of: $0, among: 2) == lane }, "a device on lane \(lane)")
        }
        func events() -> Int { scenario.observer.messages.filter { $0.topic.hasPrefix("lanes/event/") }.count }
        func errors(_ code: String) -> [MQTTMessage] {
            scenario.observer.messages.filter { $0.topic == "lanes/error" && $0.text.contains(#""error":"\#(code)""#) }
        }

        try runCommand("prlimit", ["--pid", "\(pid)", "--fsize=100:unlimited"])
        let outage = 8
        for step in 0...outage { for device in devices { try scenario.publish(device, step: step) } }
        #expect(waitUntil { events() == 2 * outage }, "every notification is published while nothing can be saved")
        #expect(waitUntil { errors("delivery_queue_full").count == 2 * outage - 3 }, "past 3 held by both lanes together, all are refused")
        #expect(errors("delivery_queue_full").allSatisfy { $0.text.contains("3 notifications are already waiting for hook (maximumQueued)") })

        try runCommand("prlimit", ["--pid", "\(pid)", "--fsize=unlimited:unlimited"])
        for device in devices { try scenario.publish(device, step: outage + 1) }
        #expect(waitUntil { bridge.log.contains("the state database can be written again") })
        #expect(waitUntil { errors("delivery_queue_full").count == 2 * outage - 1 }, "the store's bound refuses two more")
        bridge.kill(SIGTERM)
        let counts = try #require(try DeliveryQueue(path: bridge.statePath).counts().first)
        #expect(counts.pending + counts.retrying == 3)
        #expect(counts.refused == 2 * outage - 1)
    }
}
