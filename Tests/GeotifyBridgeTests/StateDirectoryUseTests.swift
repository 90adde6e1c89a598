import Foundation
import Testing
@testable import GeotifyBridge
import GeotifyCore
import GeotifyStore
import GeotifyTestSupport

/// A state directory serves one bridge, and only with the devices that bridge owns.
@Suite("State directory use", .waiting)
struct StateDirectoryUseTests {
    /// A second bridge on a state directory in use is refused at start, with the
    /// directory named: two bridges would give one outbox id to two messages and write
    /// one hand-over mark. Once the first stops, a bridge starts there again.
    @Test func aSecondBridgeOnAStateDirectoryInUseIsRefused() throws {
        let harness = try BridgeHarness()
        var other = harness.settings
        other.clientID = "geotify-other"
        let second = Bridge(settings: other, logger: Logger(level: .debug, sink: { _ in }))
        let error = #expect(throws: StartupError.self) { try second.start() }
        #expect(error?.description.hasPrefix("cannot use the state directory \(harness.stateDirectory): another geotify process is using it") == true,
                "\(String(describing: error))")
        harness.stopBridge()
        try harness.startBridge()
    }

    /// States of devices another shard owns (a directory left by another assignment)
    /// are not loaded: this shard's occupancy part counts its own devices only.
    @Test func devicesAnotherShardOwnsAreNotCounted() throws {
        let fences = """
            {"devices": {"a/phone": [], "c/phone": []},
             "shared": [{"identifier": "plaza", "latitude": 52.5, "longitude": 13.4, "radius": 100, "eventType": "onEntry"}]}
            """
        let shard = try ShardAssignment(index: 0, count: 2)
        #expect(!shard.owns("a/phone") && shard.owns("c/phone"))
        let harness = try BridgeHarness(fences: fences, start: false) { $0.shard = shard }
        do {
            let store = try StateStore(directory: harness.stateDirectory)
            let inside = DeviceState(fences: [FenceState(fence: "plaza", since: 1)])
            try store.save(devices: [("a/phone", inside, true), ("c/phone", inside, true)], outbox: [])
        }
        try harness.startBridge()
        #expect(harness.observer.waitForMessage(on: "geotify/shard/0/occupancy/shared/plaza")?.text == "1")
        #expect(harness.logLines.all.contains { $0.contains("holds the states of 1 device that shard 0/2 does not own") })
        #expect(try StateStore(directory: harness.stateDirectory).loadDevices().keys.sorted() == ["a/phone", "c/phone"], "kept for a reshard")
    }
}
