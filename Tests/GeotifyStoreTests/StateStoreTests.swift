import Foundation
import Testing
import GeotifyCore
@testable import GeotifyStore

@Suite("State store")
struct StateStoreTests {
    let directory = TemporaryDirectory()

    /// Event messages at QoS 1 whose payloads are the numbers of `range`, in order.
    static func events(_ range: some Sequence<Int>) -> [OutboxMessage] {
        range.map { OutboxMessage(topic: "geotify/event/a", payload: Array("\($0)".utf8), qos: 1, retain: false) }
    }

    /// Saves each of `messages` in a commit, and so an outbox row, of its own; their ids.
    static func saveEachInARow(_ messages: [OutboxMessage], in store: StateStore) throws -> [Int64] {
        var ids: [Int64] = []
        for message in messages { ids += try store.save(devices: [], outbox: [message]) }
        return ids
    }

    @Test func deviceStatesSurviveReopening() throws {
        let fix = Fix(device: "alice/phone", coordinate: Coordinate(latitude: 52.52, longitude: 13.405), accuracy: 12, timestamp: 1_700_000_000.5)
        let state = DeviceState(badge: 3, lastFix: fix, revision: 7, fences: [
            FenceState(fence: "home", since: 1_699_999_000, dwelled: true),
            FenceState(fence: "office", inside: false, since: 1_699_000_000, pending: PendingChange(
                inside: true, coordinate: Coordinate(latitude: 52.5, longitude: 13.4), accuracy: nil, timestamp: 1_700_000_000)),
            FenceState(fence: "park", inside: false, since: 1_699_000_100, established: false),
            FenceState(fence: "school", inside: false, since: 1_700_000_000, repeats: 3),
        ])
        let noFix = DeviceState(badge: 0, lastFix: nil, revision: nil, fences: [])
        do {
            let store = try StateStore(directory: directory.path)
            try store.save(devices: [("alice/phone", state, true), ("van/7", noFix, false)], outbox: [])
        }
        let reopened = try StateStore(directory: directory.path)
        let devices = try reopened.loadDevices()
        #expect(devices["alice/phone"] == state)
        #expect(devices["van/7"] == noFix)
        #expect(try reopened.loadDevicesAndNames().named == ["alice/phone"])
    }

    /// Whether the fence file named a device is saved with each of its states, the last
    /// one saved counting: what tells a device removed from the file while the bridge was
    /// stopped from one the file never named. A forgotten device is in neither.
    @Test func whetherTheFileNamedADeviceIsSavedWithItsState() throws {
        do {
            let store = try StateStore(directory: directory.path)
            try store.save(devices: [("a/1", DeviceState(), true), ("b/1", DeviceState(), false), ("c/1", DeviceState(), true)], outbox: [])
            try store.save(devices: [("a/1", DeviceState(badge: 1), false), ("b/1", DeviceState(badge: 1), true)], forgetting: ["c/1"], outbox: [])
        }
        let reopened = try StateStore(directory: directory.path)
        #expect(try reopened.loadDevicesAndNames().named == ["b/1"])
        #expect(try reopened.loadDevices().keys.sorted() == ["a/1", "b/1"])
    }

    /// A state database of an earlier version has no record of whether the file named a
    /// device. Opened now, its table gains one in place: its states load as before and
    /// count as never named, and states saved now record it.
    @Test func anEarlierVersionsDeviceTableOpensAndItsDevicesCountAsNeverNamed() throws {
        do {
            let database = try Database(path: directory.file("state.sqlite"))
            try database.execute("""
                CREATE TABLE device (
                    id TEXT PRIMARY KEY, badge INTEGER NOT NULL, revision INTEGER,
                    lat REAL, lon REAL, acc REAL, tst REAL, fences TEXT NOT NULL
                ) WITHOUT ROWID;
                INSERT INTO device (id, badge, revision, lat, lon, acc, tst, fences)
                    VALUES ('alice/phone', 2, 3, 52.52, 13.405, 5, 1700000000, '[{"fence":"home","inside":true,"since":1699999000}]');
                """)
        }
        let store = try StateStore(directory: directory.path)
        let alice = try #require(try store.loadDevices()["alice/phone"])
        #expect(alice.badge == 2 && alice.revision == 3 && alice.lastFix?.accuracy == 5)
        #expect(alice.fences == [FenceState(fence: "home", since: 1_699_999_000)])
        #expect(try store.loadDevicesAndNames().named.isEmpty)
        try store.save(devices: [("bob/phone", DeviceState(), true)], outbox: [])
        let reopened = try StateStore(directory: directory.path)
        #expect(try reopened.loadDevicesAndNames().named == ["bob/phone"])
        #expect(try reopened.loadDevices().keys.sorted() == ["alice/phone", "bob/phone"])
    }

    /// A device the bridge forgets (an idle device making room) is deleted in the same
    /// commit: after reopening it has no state, and the others keep theirs.
    @Test func aForgottenDevicesStateIsGoneAfterReopening() throws {
        let state = DeviceState(badge: 2)
        do {
            let store = try StateStore(directory: directory.path)
            try store.save(devices: [("a/1", state, false), ("b/1", state, false)], outbox: [])
            try store.save(devices: [("c/1", state, false)], forgetting: ["a/1"], outbox: [])
        }
        #expect(try StateStore(directory: directory.path).loadDevices().keys.sorted() == ["b/1", "c/1"])
    }

    /// The notifications a commit queues for delivery to targets are stored with it,
    /// queued at the commit's time.
    @Test func aCommitsDeliveriesAreQueued() throws {
        let store = try StateStore(directory: directory.path)
        let entry = DeliveryEntry(target: "hook", device: "alice/phone", eventID: "e1", payload: Array(#"{"id":"e1"}"#.utf8))
        try store.save(devices: [("alice/phone", DeviceState(badge: 1), false)], outbox: [], deliveries: [entry], now: 100)
        let heads = try DeliveryQueue(path: store.path).heads()
        #expect(heads.map(\.entry) == [entry])
        #expect(heads.first?.queued == 100)
    }

    @Test func theOutboxKeepsMessagesUntilHandedOver() throws {
        let store = try StateStore(directory: directory.path, durability: .full)
        let first = OutboxMessage(topic: "geotify/event/a", payload: Array("{}".utf8), qos: 1, retain: false)
        let second = OutboxMessage(topic: "geotify/badge/a", payload: Array("1".utf8), qos: 1, retain: true)
        // Two commits: the outbox keeps a commit's messages together and deletes them
        // together, once all of them are acknowledged.
        let ids = try store.save(devices: [], outbox: [first]) + store.save(devices: [], outbox: [second])
        #expect(ids.count == 2)
        #expect(try StateStore(directory: directory.path).pendingMessages().map(\.message) == [first, second])
        try store.watermark.write(OutboxWatermark.Marks(handed: ids[0], acknowledged: ids[0]))
        #expect(try store.pendingMessages().map(\.message) == [second])
        try store.pruneAcknowledged()
        try store.watermark.write(OutboxWatermark.Marks(handed: 0, acknowledged: 0))
        #expect(try store.pendingMessages().map(\.message) == [second], "the handed-over row is gone for good")
    }

    @Test func acknowledgedRowsArePrunedAFewAtATimeAndNoOthers() throws {
        let store = try StateStore(directory: directory.path)
        let messages = Self.events(1...10)
        let ids = try Self.saveEachInARow(messages, in: store)
        try store.watermark.write(OutboxWatermark.Marks(handed: ids[9], acknowledged: ids[6]))
        #expect(try store.pruneAcknowledged(atMost: 3) == true)
        #expect(try store.unacknowledgedAtStop() == 3)
        #expect(try store.pruneAcknowledged(atMost: 3) == true)
        #expect(try store.pruneAcknowledged(atMost: 3) == false, "the seventh row was the last acknowledged")
        #expect(try store.pruneAcknowledged(atMost: 3) == false)
        try store.watermark.write(OutboxWatermark.Marks(handed: 0, acknowledged: 0))
        #expect(try store.pendingMessages().map(\.message) == Array(messages[7...]), "the three unacknowledged rows stay")
    }

    /// A few at a time means at most `limit` messages, counted from the oldest row's first
    /// id: rows of four with a limit of five go one at a time, and a limit smaller than a
    /// row still takes the oldest row whole.
    @Test func aPruneOfRowsOfSeveralMessagesTakesNoMoreThanItsLimit() throws {
        let store = try StateStore(directory: directory.path)
        var ids: [Int64] = []
        for commit in 0..<4 { ids += try store.save(devices: [], outbox: Self.events(commit * 4 + 1...commit * 4 + 4)) }
        try store.watermark.write(OutboxWatermark.Marks(handed: ids[15], acknowledged: ids[15]))
        #expect(try store.pruneAcknowledged(atMost: 5) == true)
        #expect(try store.countMessages(after: ids[0] - 1) == 12, "one row of four: a second would make eight")
        #expect(try store.pruneAcknowledged(atMost: 2) == true)
        #expect(try store.countMessages(after: ids[0] - 1) == 8, "the oldest row whole")
        #expect(try store.pruneAcknowledged(atMost: 8) == false)
        #expect(try store.countMessages(after: ids[0] - 1) == 0)
    }

    /// A commit's messages are deleted together: while some of them wait for the broker
    /// the others stay stored, and are still never sent again.
    @Test func aCommitsMessagesArePrunedOnceAllAreAcknowledged() throws {
        let store = try StateStore(directory: directory.path)
        let messages = Self.events(1...4)
        let ids = try store.save(devices: [], outbox: messages)
        #expect(ids == Array(ids[0]...ids[0] + 3), "consecutive ids")
        try store.watermark.write(OutboxWatermark.Marks(handed: ids[3], acknowledged: ids[1]))
        #expect(try store.pruneAcknowledged() == false)
        #expect(try store.unacknowledgedAtStop() == 2)
        #expect(try store.pendingMessages().isEmpty, "nothing handed over is pending")
        try store.watermark.write(OutboxWatermark.Marks(handed: 0, acknowledged: 0))
        #expect(try store.pendingMessages().map(\.message) == messages, "the commit's messages are all still stored")
        try store.watermark.write(OutboxWatermark.Marks(handed: ids[3], acknowledged: ids[3]))
        #expect(try store.pruneAcknowledged() == false)
        try store.watermark.write(OutboxWatermark.Marks(handed: 0, acknowledged: 0))
        #expect(try store.pendingMessages().isEmpty, "all acknowledged: deleted together")
    }

    /// A commit of more messages than a stored row holds: the ids run on across rows, and
    /// reading and counting from any id sees each message once, in order.
    @Test func aLargeCommitReadsBackInOrderFromAnyId() throws {
        let store = try StateStore(directory: directory.path)
        let count = OutboxBatch.capacity * 2 + 5
        let messages = (0..<count).map { OutboxMessage(topic: "geotify/event/\($0 % 7)", payload: Array("\($0)".utf8), qos: $0 % 2, retain: $0 % 3 == 0) }
        let before = try store.save(devices: [], outbox: Array(messages.prefix(3)))
        let ids = try store.save(devices: [], outbox: Array(messages.dropFirst(3)))
        #expect(ids.first == before[2] + 1 && ids == Array(ids[0]..<ids[0] + Int64(count - 3)))
        for after in [before[0] - 1, before[2], ids[1_020], ids[1_021], ids[2_000], ids[count - 4]] {
            let expected = messages.indices.filter { $0 < 3 ? before[$0] > after : ids[$0 - 3] > after }
            #expect(try store.countMessages(after: after) == expected.count)
            var read: [StateStore.PendingMessage] = []
            try store.pendingMessages(after: after, limit: 700) { read = $0 }
            #expect(read.map(\.message) == expected.prefix(700).map { messages[$0] }, "after \(after)")
            #expect(read.map(\.id) == read.indices.map { after + 1 + Int64($0) })
        }
        try store.dropMessages(after: ids[1_500])
        #expect(try store.countMessages(after: 0) == 3 + 1_501)
        try store.watermark.write(OutboxWatermark.Marks(handed: ids[1_400], acknowledged: ids[1_400]))
        #expect(try store.pendingMessages().map(\.message) == Array(messages[(1_404)...(1_503)]))
    }

    /// The outbox is read back as untrusted: a row whose ids run past the largest, or
    /// that claims fewer than no messages, is an error that says so, never a trap.
    @Test func aDamagedOutboxRowIsAnErrorNeverACrash() throws {
        let store = try StateStore(directory: directory.path)
        let message = OutboxMessage(topic: "geotify/event/a", payload: [], qos: 1, retain: false)
        let database = try Database(path: directory.file("state.sqlite"))
        // Four whole messages whose last ids would pass the largest; one message in a row
        // that says it holds -1.
        for (first, count, held) in [(Int64.max - 1, Int64(4), 4), (10, -1, 1)] {
            try database.execute("DELETE FROM outbox_batch")
            try database.prepare("INSERT INTO outbox_batch (first, count, messages) VALUES (?, ?, ?)")
                .run([.integer(first), .integer(count), .blob(OutboxBatch.encode(Array(repeating: message, count: held)[...]))])
            let error = #expect(throws: StoreError.self) { try store.pendingMessages(after: 0, limit: 10) { _ in } }
            #expect(error?.reason.hasPrefix("a stored batch of messages is damaged") == true, "first \(first), count \(count)")
        }
    }

    /// A database whose outbox ids reach the largest (a damaged row, or a hand-over mark
    /// at the largest id with a valid check word) is refused on opening with an error
    /// that says so, never a trap: before, every start of the bridge crashed on it. The
    /// advice names the mark file only when the mark is what is damaged.
    @Test func anOutboxWhoseIdsReachTheLargestIsRefusedOnOpening() throws {
        let message = OutboxMessage(topic: "t", payload: Array("p".utf8), qos: 1, retain: false)
        for (first, count, reason) in [
            (Int64.max, Int64(1), "a stored batch of messages reaches the largest id"),
            (Int64.max - 1, Int64(4), "a stored batch of messages has ids running past the largest"),
        ] {
            let place = TemporaryDirectory()
            do {
                _ = try StateStore(directory: place.path)
                let database = try Database(path: place.file("state.sqlite"))
                try database.prepare("INSERT INTO outbox_batch (first, count, messages) VALUES (?, ?, ?)")
                    .run([.integer(first), .integer(count), .blob(OutboxBatch.encode(Array(repeating: message, count: Int(count))[...]))])
            }
            let error = #expect(throws: StoreError.self, "first \(first), count \(count)") { try StateStore(directory: place.path) }
            #expect(error?.reason.hasPrefix("its ids are exhausted or damaged: \(reason)") == true, "\(String(describing: error))")
            #expect(error?.reason.contains("or start once with --reset-state") == true)
            #expect(error?.reason.contains("outbox.handed") == false, "the mark is sound: only the database is set aside")
        }
        do {
            let store = try StateStore(directory: directory.path)
            try store.watermark.write(OutboxWatermark.Marks(handed: .max, acknowledged: 0))
        }
        let error = #expect(throws: StoreError.self) { try StateStore(directory: directory.path) }
        #expect(error?.reason.contains("the hand-over mark in outbox.handed is at the largest id") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("delete outbox.handed and start once with --reset-state") == true)
    }

    /// The last ids are given, and a commit that would need more is refused, not a trap.
    @Test func aCommitPastTheLargestIdIsRefused() throws {
        do {
            let store = try StateStore(directory: directory.path)
            try store.watermark.write(OutboxWatermark.Marks(handed: .max - 3, acknowledged: 0))
        }
        let store = try StateStore(directory: directory.path)
        let message = OutboxMessage(topic: "t", payload: [], qos: 1, retain: false)
        #expect(try store.save(devices: [], outbox: [message]) == [.max - 2])
        let error = #expect(throws: StoreError.self) { try store.save(devices: [], outbox: [message, message]) }
        #expect(error?.reason.hasPrefix("the outbox ids are exhausted") == true)
        #expect(try store.save(devices: [], outbox: [message]) == [.max - 1])
        #expect(throws: StoreError.self) { try store.save(devices: [], outbox: [message]) }
    }

    /// Pruning works out how far to delete from the oldest row and the acknowledged mark,
    /// both read back: far apart they make no arithmetic trap.
    @Test func pruningBetweenTheFarthestIdsIsNoCrash() throws {
        let store = try StateStore(directory: directory.path)
        let database = try Database(path: directory.file("state.sqlite"))
        let message = OutboxMessage(topic: "t", payload: [], qos: 1, retain: false)
        try database.prepare("INSERT INTO outbox_batch (first, count, messages) VALUES (?, 1, ?)")
            .run([.integer(.min), .blob(OutboxBatch.encode([message][...]))])
        try store.watermark.write(OutboxWatermark.Marks(handed: .max, acknowledged: .max))
        try store.pruneAcknowledged(atMost: 10)
        var left: Int64 = -1
        try database.prepare("SELECT count(*) FROM outbox_batch").query { row in left = row.integer(0) }
        #expect(left == 0, "the acknowledged row is gone")
    }

    @Test func afterACrashOnlyRowsPastTheMarkAreResent() throws {
        let store = try StateStore(directory: directory.path)
        let messages = Self.events(1...4)
        let ids = try store.save(devices: [], outbox: messages)
        try store.watermark.write(OutboxWatermark.Marks(handed: ids[2], acknowledged: ids[0]))
        let reopened = try StateStore(directory: directory.path)
        #expect(try reopened.unacknowledgedAtStop() == 2, "rows 2 and 3 were handed over and not acknowledged")
        #expect(try reopened.pendingMessages().map(\.message) == [messages[3]])
    }

    @Test func aLostWriteAheadLogResendsNothingHandedOver() throws {
        let messages = Self.events(1...3)
        do {
            let store = try StateStore(directory: directory.path)
            try store.save(devices: [], outbox: messages)
        }
        // The database file now holds the three rows (closing checkpointed them). What
        // follows lives only in the write-ahead log, which is then lost.
        let copy = directory.file("copy")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        do {
            let store = try StateStore(directory: directory.path)
            try store.watermark.write(OutboxWatermark.Marks(handed: 3, acknowledged: 3))
            try store.pruneAcknowledged()
            try FileManager.default.copyItem(atPath: directory.file("state.sqlite"), toPath: copy + "/state.sqlite")
            try FileManager.default.copyItem(atPath: directory.file("outbox.handed"), toPath: copy + "/outbox.handed")
        }
        let recovered = try StateStore(directory: copy)
        #expect(try recovered.pendingMessages().isEmpty, "nothing handed over is sent again")
        let next = OutboxMessage(topic: "geotify/event/a", payload: Array("4".utf8), qos: 1, retain: false)
        let ids = try recovered.save(devices: [], outbox: [next])
        #expect(ids == [4])
        #expect(try recovered.pendingMessages().map(\.message) == [next], "new rows get ids past the mark")
    }

    @Test(arguments: [Array(repeating: 0x41, count: 24), Array(repeating: 0x41, count: 10), Array(repeating: 0x41, count: 40)])
    func aDamagedMarkSendsNothingLeftInTheOutboxAgain(garbage: [UInt8]) throws {
        let messages = Self.events(1...4)
        let ids: [Int64]
        do {
            let store = try StateStore(directory: directory.path)
            ids = try store.save(devices: [], outbox: messages)
            try store.watermark.write(OutboxWatermark.Marks(handed: ids[1], acknowledged: ids[0]))
        }
        try Data(garbage).write(to: URL(fileURLWithPath: directory.file("outbox.handed")))
        let reopened = try StateStore(directory: directory.path)
        #expect(try reopened.pendingMessages().isEmpty, "whether they were handed over cannot be told: none is sent again")
        #expect(try reopened.pendingCount() == 0)
        #expect(reopened.damagedMark?.skipped == 4)
        #expect(reopened.damagedMark?.handedThrough == ids[3])
        #expect(reopened.damagedMark?.warning.contains(directory.file("outbox.handed")) == true)
        #expect(reopened.watermark.contents() == .marks(OutboxWatermark.Marks(handed: ids[3], acknowledged: ids[3])), "written whole again")
        let next = OutboxMessage(topic: "geotify/event/a", payload: Array("5".utf8), qos: 1, retain: false)
        #expect(try reopened.save(devices: [], outbox: [next]) == [ids[3] + 1])
        #expect(try reopened.pendingMessages().map(\.message) == [next], "what comes after is sent")
        let again = try StateStore(directory: directory.path)
        #expect(again.damagedMark == nil, "the mark is sound at the next start")
        #expect(try again.pendingMessages().map(\.message) == [next])
    }

    /// The warning about a damaged mark says how many messages it cost: those in the
    /// outbox, none of which is sent.
    @Test func theDamagedMarksWarningCountsTheMessagesNotSent() throws {
        do {
            let store = try StateStore(directory: directory.path)
            let messages = Self.events(1...3)
            try store.save(devices: [], outbox: messages)
        }
        try Data(repeating: 0x41, count: 24).write(to: URL(fileURLWithPath: directory.file("outbox.handed")))
        let warning = try #require(try StateStore(directory: directory.path).damagedMark?.warning)
        #expect(warning.contains("so whether the 3 messages in the outbox were handed to the broker before the last stop cannot be told"), "\(warning)")
    }

    @Test func anEmptyMarkIsNewAndTheOutboxIsSent() throws {
        let messages = Self.events(1...2)
        do {
            let store = try StateStore(directory: directory.path)
            try store.save(devices: [], outbox: messages)
            #expect(store.watermark.contents() == .empty, "nothing was handed over yet")
        }
        let reopened = try StateStore(directory: directory.path)
        #expect(reopened.damagedMark == nil)
        #expect(try reopened.pendingMessages().map(\.message) == messages)
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

    /// A command's change saves the revisions of its devices' fences: a fence it added
    /// keeps the revision it came in after reopening, and the other devices' revisions
    /// are left as they were.
    @Test func theRevisionsOfChangedDevicesArePersisted() throws {
        let home = Fence(identifier: "home", region: .circle(center: Coordinate(latitude: 0, longitude: 0), radius: 5), note: "", eventType: .onEntry)
        let book = FenceBook(devices: ["a": [home], "b": [home]]).revised(knownRevisions: [:], currentRevision: 2)
        let store = try StateStore(directory: directory.path)
        try store.saveRevisions(of: book)
        let gym = Fence(identifier: "gym", region: .circle(center: Coordinate(latitude: 1, longitude: 1), radius: 5), note: "", eventType: .onEntry)
        let changed = FenceBook(devices: ["a": [home, gym], "b": [home]]).revised(knownRevisions: book.knownRevisions, currentRevision: book.revision)
        try store.saveRevisions(of: changed, devices: ["a"])
        let loaded = try StateStore(directory: directory.path).loadRevisions()
        #expect(loaded.current == 4)
        #expect(loaded.known == ["a": ["home": 3, "gym": 4], "b": ["home": 3]])
    }

    @Test func anUnwritableDirectoryIsAClearError() throws {
        let blocked = directory.write("a file, not a directory", to: "blocked")
        do {
            _ = try StateStore(directory: blocked + "/state")
            Issue.record("opened a state store under a file")
        } catch {
            #expect(error.operation == "use state directory \(blocked)/state")
        }
    }

    /// The count of messages waiting at a start (what the bridge reports, and how it
    /// knows more wait than it read) is of those never handed over: those handed over
    /// and not acknowledged are not sent again, so they do not wait.
    @Test func thePendingCountLeavesOutMessagesHandedOverButNotAcknowledged() throws {
        let store = try StateStore(directory: directory.path)
        let messages = Self.events(1...4)
        let ids = try store.save(devices: [], outbox: messages)
        try store.watermark.write(OutboxWatermark.Marks(handed: ids[2], acknowledged: ids[0]))
        #expect(try store.pendingCount() == 1)
        #expect(try store.pendingMessages().count == 1)
    }

    /// Read from each id of a commit of more messages than a row holds, the next message
    /// is the one after it, and the count is of those after it, wherever the id falls in
    /// its row: the rows holding ids past a mark are found by their first ids, which holds
    /// only while no row holds more than `OutboxBatch.capacity`.
    @Test func readFromEveryIdOfALargeCommitTheNextMessageFollows() throws {
        let store = try StateStore(directory: directory.path)
        let count = OutboxBatch.capacity * 2 + 3
        let messages = Self.events(0..<count)
        let ids = try store.save(devices: [], outbox: messages)
        var wrong: [Int64] = []
        for (index, id) in ids.enumerated() {
            var read: [StateStore.PendingMessage] = []
            try store.pendingMessages(after: id - 1, limit: 1) { read = $0 }
            let counted = try store.countMessages(after: id - 1)
            if read.map(\.id) != [id] || read.map(\.message) != [messages[index]] || counted != count - index {
                wrong.append(id - 1)
            }
        }
        #expect(wrong.isEmpty, "read wrongly after \(wrong.prefix(10))")
    }

    /// Read with a limit (as the bridge reads the outbox at a start, and a spilling
    /// publisher reads it back), the rows read are those with a message past the mark: a
    /// row that ends exactly at the mark takes no part of the limit.
    @Test func aLimitedReadGivesTheMessagesPastTheMark() throws {
        let store = try StateStore(directory: directory.path)
        let messages = Self.events(1...3)
        let ids = try Self.saveEachInARow(messages, in: store)
        try store.watermark.write(OutboxWatermark.Marks(handed: ids[0], acknowledged: ids[0]))
        #expect(try store.pendingMessages(limit: 1).map(\.message) == [messages[1]])
        var read: [StateStore.PendingMessage] = []
        try store.pendingMessages(after: ids[1], limit: 1) { read = $0 }
        #expect(read.map(\.message) == [messages[2]])
    }

    /// Pruning a few at a time deletes the oldest row whole even when it holds more
    /// messages than the few asked for: rows go only whole, and a row left because it is
    /// larger than the limit would stay for ever, with "rows are left" said for ever.
    @Test func pruningFewerThanTheOldestRowHoldsDeletesItWhole() throws {
        let store = try StateStore(directory: directory.path)
        let messages = Self.events(1...4)
        _ = try store.save(devices: [], outbox: messages)
        let later = try store.save(devices: [], outbox: [messages[0]])
        try store.watermark.write(OutboxWatermark.Marks(handed: later[0], acknowledged: later[0]))
        #expect(try store.pruneAcknowledged(atMost: 1) == true, "the second commit's row is left")
        #expect(try store.countMessages(after: 0) == 1)
        #expect(try store.pruneAcknowledged(atMost: 1) == false)
        #expect(try store.countMessages(after: 0) == 0)
    }

    /// Pruning leaves a row some of whose messages are not acknowledged, even when its
    /// first is: the others are still sent, or counted as possibly lost at a stop.
    @Test func aRowPartlyAcknowledgedIsNotPruned() throws {
        let store = try StateStore(directory: directory.path)
        let messages = Self.events(1...3)
        _ = try store.save(devices: [], outbox: [messages[0]])
        let rest = try store.save(devices: [], outbox: [messages[1], messages[2]])
        try store.watermark.write(OutboxWatermark.Marks(handed: rest[0], acknowledged: rest[0]))
        #expect(try store.pruneAcknowledged() == false)
        #expect(try store.countMessages(after: 0) == 2, "the first row went, the second stays whole")
        #expect(try store.pendingMessages().map(\.message) == [messages[2]], "the second row's last message is still sent")
    }

    /// So does pruning a few at a time: a row of ten messages whose first five are
    /// acknowledged stays whole when two at a time are pruned (the row is larger than
    /// the limit, and its acknowledged part reaches past the limit).
    @Test func aLargeRowPartlyAcknowledgedIsNotPrunedAFewAtATime() throws {
        let store = try StateStore(directory: directory.path)
        let messages = Self.events(1...10)
        let ids = try store.save(devices: [], outbox: messages)
        try store.watermark.write(OutboxWatermark.Marks(handed: ids[4], acknowledged: ids[4]))
        #expect(try store.pruneAcknowledged(atMost: 2) == false)
        #expect(try store.countMessages(after: 0) == 10, "the row stays whole")
        #expect(try store.pendingMessages().map(\.message) == Array(messages[5...]), "its last five are still sent")
    }

    /// A mark file of more than a mark's 24 bytes is damaged, even when its first 24 hold
    /// a sound mark: what the rest is cannot be told (a write of another program, a copy
    /// gone wrong), so nothing in the outbox is sent again.
    @Test func aMarkFileWithBytesPastTheMarkIsDamaged() throws {
        let messages = Self.events(1...3)
        let ids: [Int64]
        do {
            let store = try StateStore(directory: directory.path)
            ids = try store.save(devices: [], outbox: messages)
            try store.watermark.write(OutboxWatermark.Marks(handed: ids[0], acknowledged: ids[0]))
        }
        let handle = try #require(FileHandle(forWritingAtPath: directory.file("outbox.handed")))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: 0, count: 16))
        try handle.close()
        let reopened = try StateStore(directory: directory.path)
        #expect(reopened.damagedMark?.damage == "40 bytes; a mark is 24")
        #expect(reopened.damagedMark?.skipped == 3)
        #expect(try reopened.pendingMessages().isEmpty)
        #expect(reopened.watermark.contents() == .marks(OutboxWatermark.Marks(handed: ids[2], acknowledged: ids[2])))
    }

    /// A device's stored fence states are read back as untrusted: a state without
    /// whether the device is inside, or with a count of repeats that is no count, is an
    /// error that names the device, never read as "outside" or as no repeats.
    @Test(arguments: [
        #"[{"fence":"home","since":1700000000}]"#,
        #"[{"fence":"home","inside":true,"since":1700000000,"repeats":-1}]"#,
        #"[{"fence":"home","inside":true,"since":1700000000,"repeats":1.5}]"#,
    ])
    func damagedFenceStatesAreAnErrorNotAGuess(fences: String) throws {
        let store = try StateStore(directory: directory.path)
        try store.save(devices: [("alice/phone", DeviceState(badge: 1), true)], outbox: [])
        let database = try Database(path: directory.file("state.sqlite"))
        try database.prepare("UPDATE device SET fences = ? WHERE id = 'alice/phone'").run([.text(fences)])
        let error = #expect(throws: StoreError.self) { try store.loadDevices() }
        #expect(error?.operation == "read the state of device alice/phone")
        #expect(error?.reason == "the stored fence states are not readable")
    }

    /// Deliveries a lane refused while no commit could be written (held in memory within
    /// the bounds) are counted under their targets by the next commit, every one of them.
    @Test func deliveriesRefusedWhileCommitsFailedAreCountedByTheNextCommit() throws {
        let store = try StateStore(directory: directory.path)
        try store.save(devices: [], outbox: [], refusedBefore: ["hook": 3, "ntfy": 1, "mail": 0])
        let counts = try DeliveryQueue(path: store.path).counts()
        #expect(counts.map { "\($0.target) \($0.refused)" } == ["hook 3", "ntfy 1"])
    }
}
