import Testing
@testable import GeotifyBridge
import GeotifyCore

/// The lane's table of devices, where it concerns the lookahead's hints.
@Suite("Device table")
struct DeviceTableTests {
    /// A slot looked up when a batch was decoded may be freed, given to another device or
    /// have no fences kept yet when the lookahead reaches it: the hint is then skipped or
    /// wasted, never a crash or a change.
    @Test func theLookaheadTakesAnySlot() throws {
        var table = DeviceTable()
        let book = try LaneFixture.parse(#"{ "devices": { "a/1": [ { "identifier": "home", "latitude": 1, "longitude": 2, "radius": 100, "note": "", "eventType": "onEntry" } ] } }"#, settings: Settings())
        for stage in [EvaluationLookahead.Stage.objects, .tables] {
            table.prefetch(stage, slot: 0)
        }
        let slot = table.insert(DeviceRecord(state: DeviceState(), lastSeen: 0), for: "a/1")
        for stage in [EvaluationLookahead.Stage.objects, .tables] { table.prefetch(stage, slot: slot) }
        let fences = table.fences(at: slot, in: book)
        #expect(!fences.own.isEmpty)
        for stage in [EvaluationLookahead.Stage.objects, .tables] {
            table.prefetch(stage, slot: slot)
            table.prefetch(stage, slot: slot + 1)
        }
        table["a/1"] = nil
        for stage in [EvaluationLookahead.Stage.objects, .tables] { table.prefetch(stage, slot: slot) }
        #expect(table.count == 0)
    }

    /// A slot freed by a device forgotten and given to a new one in the same edition of
    /// the book holds the new device's fences, not those kept for the device that had it.
    @Test func aSlotGivenToANewDeviceHoldsItsOwnFences() throws {
        var table = DeviceTable()
        let book = try LaneFixture.parse(#"""
            { "devices": {
                "a/1": [ { "identifier": "home", "latitude": 1, "longitude": 2, "radius": 100, "note": "", "eventType": "onEntry" } ],
                "b/1": [ { "identifier": "work", "latitude": 3, "longitude": 4, "radius": 100, "note": "", "eventType": "onEntry" } ] } }
            """#, settings: Settings())
        let slot = table.insert(DeviceRecord(state: DeviceState(), lastSeen: 0), for: "a/1")
        #expect(table.fences(at: slot, in: book).own.map(\.identifier) == ["home"])
        table["a/1"] = nil
        let reused = table.insert(DeviceRecord(state: DeviceState(), lastSeen: 0), for: "b/1")
        #expect(reused == slot, "the freed slot is given to the next new device")
        #expect(table.fences(at: reused, in: book).own.map(\.identifier) == ["work"])
    }
}
