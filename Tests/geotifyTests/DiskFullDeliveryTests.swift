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
        let full = try FullDiskBridge("full", devices: 1, bound: #""maximumQueuedPerDevice": 3"#)
        let (scenario, bridge) = (full.scenario, full.bridge)
        let device = scenario.devices[0]

        try full.fillTheDisk()
        let outage = 8
        for step in 0...outage { try scenario.publish(device, step: step) }
        #expect(waitUntil { full.events() == outage }, "every notification is published while nothing can be saved")
        #expect(waitUntil { !full.errors("state_write").isEmpty }, "the failure is reported")
        #expect(waitUntil { full.errors("delivery_queue_full").count == outage - 3 }, "the newest past the bound are refused in memory")
        #expect(full.errors("delivery_queue_full").allSatisfy {
            $0.text.contains("3 notifications of \(device) are already waiting for hook (maximumQueuedPerDevice)")
        })

        try full.freeTheDisk()
        try scenario.publish(device, step: outage + 1)
        #expect(waitUntil { bridge.log.contains("the state database can be written again") })
        #expect(waitUntil { full.errors("delivery_queue_full").count == outage - 2 }, "the store's bound refuses the next")
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
        let full = try FullDiskBridge("lanes", devices: 4, bound: #""maximumQueued": 3"#)
        let (scenario, bridge) = (full.scenario, full.bridge)
        // `BridgeProcess` runs two lanes.
        let devices = try [0, 1].map { lane in
            try #require(scenario.devices.first { MessageRouter.lane(of: $0, among: 2) == lane }, "a device on lane \(lane)")
        }

        try full.fillTheDisk()
        let outage = 8
        for step in 0...outage { for device in devices { try scenario.publish(device, step: step) } }
        #expect(waitUntil { full.events() == 2 * outage }, "every notification is published while nothing can be saved")
        #expect(waitUntil { full.errors("delivery_queue_full").count == 2 * outage - 3 }, "past 3 held by both lanes together, all are refused")
        #expect(full.errors("delivery_queue_full").allSatisfy { $0.text.contains("3 notifications are already waiting for hook (maximumQueued)") })

        try full.freeTheDisk()
        for device in devices { try scenario.publish(device, step: outage + 1) }
        #expect(waitUntil { bridge.log.contains("the state database can be written again") })
        #expect(waitUntil { full.errors("delivery_queue_full").count == 2 * outage - 1 }, "the store's bound refuses two more")
        bridge.kill(SIGTERM)
        let counts = try #require(try DeliveryQueue(path: bridge.statePath).counts().first)
        #expect(counts.pending + counts.retrying == 3)
        #expect(counts.refused == 2 * outage - 1)
    }
}

/// A `geotify run` named `name` (its topic prefix) over `devices` devices with one
/// webhook target, `hook`, that is down (503) and has the bound members `bound`; its disk
/// is made full and writable again with `prlimit --fsize` on the running process.
private final class FullDiskBridge {
    let scenario: DeliveryScenario
    let bridge: BridgeProcess
    private let receiver: TestHTTPServer
    private let name: String
    private let pid: Int32

    init(_ name: String, devices: Int, bound: String) throws {
        self.name = name
        scenario = try DeliveryScenario("disk-\(name)", devices: devices)
        receiver = try TestHTTPServer { _ in TestHTTPServer.Response(status: 503, body: "down for maintenance") }
        bridge = try scenario.startBridge(
            name, extra: DeliveryScenario.notify(DeliveryScenario.webhook("hook", url: receiver.url + "/hook", bound)))
        guard let pid = bridge.child?.pid else { throw TestSupportError("\(name) has no process") }
        self.pid = pid
    }

    deinit {
        receiver.stop()
    }

    /// No file of the process can grow past 100 bytes.
    func fillTheDisk() throws {
        try runCommand("prlimit", ["--pid", "\(pid)", "--fsize=100:unlimited"])
    }

    func freeTheDisk() throws {
        try runCommand("prlimit", ["--pid", "\(pid)", "--fsize=unlimited:unlimited"])
    }

    /// How many notifications the bridge published.
    func events() -> Int {
        scenario.observer.messages.filter { $0.topic.hasPrefix("\(name)/event/") }.count
    }

    /// The errors with `code` the bridge published.
    func errors(_ code: String) -> [MQTTMessage] {
        scenario.observer.messages.filter { $0.topic == "\(name)/error" && $0.text.contains(#""error":"\#(code)""#) }
    }
}
