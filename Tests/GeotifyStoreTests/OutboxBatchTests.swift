import Foundation
import Testing
@testable import GeotifyStore

/// The stored form of a commit's outbox messages, and the outbox of an earlier version
/// (a row a message) carried over into it.
@Suite("Outbox batches")
struct OutboxBatchTests {
    let directory = TemporaryDirectory()

    let messages = [
        OutboxMessage(topic: "geotify/event/alice/phone", payload: Array(#"{"event":"enter"}"#.utf8), qos: 1, retain: false),
        OutboxMessage(topic: "geotify/badge/alice/phone", payload: Array("1".utf8), qos: 1, retain: true),
        OutboxMessage(topic: "geotify/état/ünïcode", payload: [], qos: 0, retain: false),
        OutboxMessage(topic: "t", payload: [0, 255, 10, 13], qos: 2, retain: true),
    ]

    @Test func messagesReadBackAsTheyWereWritten() throws {
        let bytes = OutboxBatch.encode(messages[...])
        #expect(try OutboxBatch.decode(bytes, count: messages.count) == messages)
        #expect(try OutboxBatch.decode([], count: 0).isEmpty)
    }

    /// Read for some of its messages, a batch gives exactly those, and checks the others
    /// as thoroughly: damaged bytes anywhere are an error whichever are kept.
    @Test func someMessagesReadBackAsTheyWereWritten() throws {
        let bytes = OutboxBatch.encode(messages[...])
        for start in 0...messages.count {
            for end in start...messages.count {
                #expect(try OutboxBatch.decode(bytes, count: messages.count, keeping: start..<end) == Array(messages[start..<end]))
            }
        }
        #expect(try OutboxBatch.decode(bytes, count: messages.count, keeping: 2..<9) == Array(messages[2...]), "past the end: none")
        for end in 1..<bytes.count {
            #expect(throws: StoreError.self) { try OutboxBatch.decode(Array(bytes[..<end]), count: messages.count, keeping: 0..<1) }
        }
        #expect(throws: StoreError.self) { try OutboxBatch.decode(bytes, count: messages.count + 1, keeping: 0..<0) }
        #expect(throws: StoreError.self) { try OutboxBatch.decode(bytes, count: -1) }
    }

    /// Bytes that do not add up are an error that says so, whatever they are: cut short
    /// anywhere, a count that disagrees, flags no message has, a length past the end.
    @Test func damagedBytesAreAnErrorNeverACrash() throws {
        let bytes = OutboxBatch.encode(messages[...])
        var failures = 0
        for end in 1..<bytes.count {
            do {
                _ = try OutboxBatch.decode(Array(bytes[..<end]), count: messages.count)
            } catch {
                #expect(error.reason.hasPrefix("a stored batch of messages is damaged"))
                failures += 1
            }
        }
        #expect(failures == bytes.count - 1, "every cut is found")
        // A count one short is refused at the message past it, with what is wrong.
        let fewer = #expect(throws: StoreError.self) { try OutboxBatch.decode(bytes, count: messages.count - 1) }
        #expect(fewer?.reason == "a stored batch of messages is damaged: it holds more than its \(messages.count - 1) messages")
        let more = #expect(throws: StoreError.self) { try OutboxBatch.decode(bytes, count: messages.count + 1) }
        #expect(more?.reason == "a stored batch of messages is damaged: it holds \(messages.count) messages, not \(messages.count + 1)")
        #expect(throws: StoreError.self) { try OutboxBatch.decode([8, 0, 0, 0, 0, 0, 0, 0, 0], count: 1) }
        #expect(throws: StoreError.self) { try OutboxBatch.decode([3, 0, 0, 0, 0, 0, 0, 0, 0], count: 1) }
        #expect(throws: StoreError.self) { try OutboxBatch.decode([1, 255, 255, 255, 255, 0], count: 1) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let noise = (0..<Int.random(in: 0..<64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = try? OutboxBatch.decode(noise, count: Int.random(in: 0...4, using: &generator))
        }
    }

    /// A state database of an earlier version keeps its outbox a row a message. Opened
    /// now, its messages not yet handed over keep their ids and are sent; those it had
    /// marked sent are not; and new messages get ids past its sequence.
    @Test func anEarlierVersionsOutboxIsCarriedOver() throws {
        do {
            let database = try earlierVersionsOutbox([(3, messages[0], true), (4, messages[1], false), (5, messages[2], false), (8, messages[3], false), (9, messages[0], false)])
            try database.execute("UPDATE sqlite_sequence SET seq = 12 WHERE name = 'outbox'")
        }
        let store = try StateStore(directory: directory.path)
        let pending = try store.pendingMessages()
        #expect(pending.map(\.id) == [4, 5, 8, 9])
        #expect(pending.map(\.message) == [messages[1], messages[2], messages[3], messages[0]])
        #expect(try store.countMessages(after: 4) == 3)
        #expect(try store.save(devices: [], outbox: [messages[1]]) == [13], "past the earlier version's sequence")
        let reopened = try StateStore(directory: directory.path)
        #expect(try reopened.pendingMessages().map(\.id) == [4, 5, 8, 9, 13])
    }

    /// An earlier version's long run of messages with consecutive ids becomes rows of at
    /// most `OutboxBatch.capacity` messages, as a commit's do: reading past a mark looks
    /// for rows no more than that before it.
    @Test func anEarlierVersionsLongOutboxBecomesRowsOfAtMostTheCapacity() throws {
        let total = 2 * OutboxBatch.capacity + 1
        _ = try earlierVersionsOutbox((1...Int64(total)).map { ($0, messages[0], false) })
        let store = try StateStore(directory: directory.path)
        #expect(try store.pendingMessages().map(\.id) == Array(1...Int64(total)))
        var rows: [Int64] = []
        try Database(path: directory.file("state.sqlite")).prepare("SELECT count FROM outbox_batch ORDER BY first").query { rows.append($0.integer(0)) }
        #expect(rows == [Int64(OutboxBatch.capacity), Int64(OutboxBatch.capacity), 1])
    }

    /// An earlier version's outbox read from a damaged database may hold any ids: two
    /// rows whose ids lie further apart than the largest integer (one negative) are two
    /// batches, not a trap in the arithmetic that asks whether they run on.
    @Test func anEarlierVersionsOutboxWithIdsFarApartOpens() throws {
        let far: Int64 = 9_000_000_000_000_000_000
        _ = try earlierVersionsOutbox([(-far, messages[0], false), (far, messages[1], false)])
        let store = try StateStore(directory: directory.path)
        #expect(try store.pendingMessages().map(\.id) == [far])
        #expect(try store.save(devices: [], outbox: [messages[2]]) == [far + 1])
    }

    /// The state database as an earlier version left it: its outbox a row a message,
    /// holding `rows` (a message marked `sent` was handed over). Returns the connection
    /// that wrote it, for a test to change more before it lets it go.
    func earlierVersionsOutbox(_ rows: [(id: Int64, message: OutboxMessage, sent: Bool)]) throws -> Database {
        let database = try Database(path: directory.file("state.sqlite"))
        try database.execute("""
            CREATE TABLE outbox (
                id INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL, payload BLOB NOT NULL,
                qos INTEGER NOT NULL, retain INTEGER NOT NULL, sent INTEGER NOT NULL DEFAULT 0
            );
            """)
        let insert = try database.prepare("INSERT INTO outbox (id, topic, payload, qos, retain, sent) VALUES (?, ?, ?, ?, ?, ?)")
        try database.transaction { () throws(StoreError) in
            for (id, message, sent) in rows {
                try insert.run([
                    .integer(id), .text(message.topic), .blob(message.payload), .integer(Int64(message.qos)),
                    .integer(message.retain ? 1 : 0), .integer(sent ? 1 : 0),
                ])
            }
        }
        return database
    }
}
