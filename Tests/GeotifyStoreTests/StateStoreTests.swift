import Foundation
import Testing
import GeotifyCore
import GeotifyStore

@Suite("State store")
struct StateStoreTests {
    let directory = TemporaryDirectory()

    @Test func deviceStatesSurviveReopening() throws {
        let fix = Fix(device: "alice/phone", coordinate: Coordinate(latitude: 52.52, longitude: 13.405), accuracy: 12, timestamp: 1_700_000_000.5)
        let state = DeviceState(badge: 3, lastFix: fix, revision: 7, inside: [FenceState(fence: "home", since: 1_699_999_000)])
        let noFix = DeviceState(badge: 0, lastFix: nil, revision: nil, inside: [])
        do {
            let store = try StateStore(directory: directory.path)
            try store.save(devices: [("alice/phone", state), ("van/7", noFix)], outbox: [])
        }
        let reopened = try StateStore(directory: directory.path)
        let devices = try reopened.loadDevices()
        #expect(devices["alice/phone"] == state)
        #expect(devices["van/7"] == noFix)
    }

    @Test func theOutboxKeepsMessagesUntilRemoved() throws {
        let store = try StateStore(directory: directory.path, durability: .full)
        let first = OutboxMessage(topic: "geotify/event/a", payload: Array("{}".utf8), qos: 1, retain: false)
        let second = OutboxMessage(topic: "geotify/badge/a", payload: Array("1".utf8), qos: 1, retain: true)
        let ids = try store.save(devices: [], outbox: [first, second])
        #expect(ids.count == 2)
        #expect(try StateStore(directory: directory.path).pendingMessages().map(\.message) == [first, second])
        try store.removeMessages([ids[0]])
        #expect(try store.pendingMessages().map(\.message) == [second])
    }

    @Test func fenceRevisionsArePersisted() throws {
        let fence = Fence(identifier: "home", region: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 5), note: "", eventType: .onEntry)
        let book = FenceBook(devices: ["a": [fence]]).revised(knownRevisions: [:], currentRevision: 2)
        let store = try StateStore(directory: directory.path)
        try store.saveRevisions(of: book)
        let loaded = try StateStore(directory: directory.path).loadRevisions()
        #expect(loaded.current == 3)
        #expect(loaded.known == ["a": ["home": 3]])
    }

    @Test func anUnwritableDirectoryIsAClearError() throws {
        let blocked = directory.write("a file, not a directory", to: "blocked")
        do {
            _ = try StateStore(directory: blocked + "/state")
            Issue.record("opened a state store under a file")
        } catch {
            #expect(error.operation == "create state directory \(blocked)/state")
        }
    }
}
