import Foundation
@testable import GeotifyBridge
import GeotifyMQTT
import GeotifyStore
import GeotifyTestSupport
import GeotifyTime
import Synchronization
import Testing

/// The publisher through a real mosquitto: what it keeps in memory is bounded, and what
/// does not fit waits in the outbox and still goes out, every message once and in order.
@Suite("Publisher through mosquitto", .waiting)
struct PublisherTests {
    @Test func aBacklogBeyondTheLimitWaitsInTheOutboxAndGoesOutInOrder() throws {
        let spill = try SpillFixture()
        defer { spill.close() }
        // While the broker is not yet connected, 100 messages are decided: 10 wait in
        // memory, the rest only in the outbox.
        let messages = SpillFixture.messages(0..<100)
        for chunk in stride(from: 0, to: messages.count, by: 25) {
            try spill.save(Array(messages[chunk..<chunk + 25]))
        }
        #expect(spill.publisher.unacknowledged == 10, "only the limit waits in memory")
        #expect(spill.publisher.pending == 100, "pending counts the ones left in the outbox too")
        try spill.client.start()
        let received = spill.observer.waitForMessages(on: "spill/#", count: 100)
        #expect(received.map(\.text) == (0..<100).map(String.init), "every message once, in order")
        #expect(waitUntil { spill.publisher.unacknowledged == 0 })
        #expect(waitUntil { spill.publisher.pending == 0 })
    }

    /// The publisher is drained (what a test or the bench waits for before it looks at
    /// what arrived) only once nothing waits, in memory or spilled to the outbox, and
    /// nothing is handed over or in flight: not while messages wait for a connection.
    @Test func itIsDrainedOnlyOnceNothingWaitsNorIsInFlight() throws {
        let spill = try SpillFixture()
        defer { spill.close() }
        #expect(spill.publisher.isDrained, "nothing queued yet")
        try spill.save(SpillFixture.messages(0..<5))
        #expect(!spill.publisher.isDrained, "five wait in memory for a connection")
        try spill.save(SpillFixture.messages(5..<25))
        #expect(!spill.publisher.isDrained, "ten wait in memory and fifteen in the outbox only")
        try spill.client.start()
        #expect(spill.observer.waitForMessages(on: "spill/#", count: 25).count == 25)
        #expect(waitUntil { spill.publisher.isDrained })
        #expect(spill.publisher.pending == 0)
    }

    /// The publisher can believe itself connected a moment before libmosquitto knows its
    /// socket is gone (the drop seen on the network thread, a publish on another). A
    /// QoS 1 message libmosquitto queued before its write failed is then libmosquitto's:
    /// it sends it on reconnecting, so the publisher must not hand it over again, and
    /// takes itself for offline until `connected()`.
    @Test func aQoS1MessageLibmosquittoKeptGoesOutOnce() throws {
        let spill = try SpillFixture(waitingLimit: 200)
        defer { spill.close() }
        spill.publisher.connected()
        try spill.save(SpillFixture.messages(0..<5))
        #expect(spill.publisher.handedOver.acknowledging == 1, "the message libmosquitto kept is in flight")
        #expect(spill.publisher.unacknowledged == 5, "the other four wait")
        #expect(!spill.publisher.canSendMore, "the failed hand-over showed no connection: the rest wait for the next, not a burst's end")
        try spill.client.start()
        #expect(spill.observer.waitForMessages(on: "spill/#", count: 5).count == 5)
        // A last message, sent after all the others: a repeated one would come before it.
        try spill.save(SpillFixture.messages(5..<6))
        let received = spill.observer.waitForMessages(on: "spill/#", count: 6)
        #expect(received.map(\.text) == (0..<6).map(String.init), "each once, in order")
        #expect(waitUntil { spill.publisher.unacknowledged == 0 }, "the kept message's acknowledgement counts as its own")
    }

    /// The hand-over mark cannot be written (a failing disk): the persisted messages are
    /// held back, not published (after a crash they would be published again), while a
    /// message not persisted still goes; once the mark can be written they go, in order,
    /// and the mark covers them.
    @Test func persistedMessagesWaitWhileTheirMarkCannotBeWritten() throws {
        let spill = try SpillFixture(waitingLimit: 200)
        defer { spill.close() }
        let mark = try spill.connectWithTheMarkFailing()
        try spill.save(SpillFixture.messages(1..<4))
        spill.publisher.send([OutboxMessage(topic: "spill/direct", payload: Array("direct".utf8), qos: 1, retain: false)])
        #expect(spill.observer.waitForMessage(on: "spill/direct") != nil)
        // Handed over before it, they would have come before it.
        #expect(spill.observer.messages.filter { $0.topic.hasPrefix("spill/") }.map(\.text) == ["0", "direct"], "the persisted ones wait")
        #expect(spill.store.watermark.read().handed == 1)
        try reopen(mark, flags: O_RDWR)
        spill.publisher.pump()
        let received = spill.observer.waitForMessages(on: "spill/#", count: 5)
        #expect(received.map(\.text) == ["0", "direct", "1", "2", "3"], "each once, in order")
        #expect(spill.store.watermark.read().handed == 4)
    }

    /// A commit that could not be written sends its messages unpersisted: behind the
    /// persisted messages decided before them that a spill left in the outbox, not ahead
    /// of them (a device's exit would come before its entry), and ahead of those decided
    /// after them.
    @Test func unpersistedMessagesOfAFailedCommitWaitBehindTheSpill() throws {
        let spill = try SpillFixture()
        defer { spill.close() }
        // Not connected yet: 10 wait in memory, 20 in the outbox only.
        try spill.save(SpillFixture.messages(0..<30))
        let failed = OutboxMessage(topic: "spill/failed", payload: Array("failed".utf8), qos: 1, retain: false)
        spill.publisher.sendUnpersisted([failed])
        try spill.save(SpillFixture.messages(30..<35))
        try spill.client.start()
        let received = spill.observer.waitForMessages(on: "spill/#", count: 36)
        let expected: [String] = (0..<30).map(String.init) + ["failed"] + (30..<35).map(String.init)
        #expect(received.map(\.text) == expected)
        #expect(waitUntil { spill.publisher.isDrained })
    }

    /// Behind a spill, the messages of a failed commit wait while their bytes stay
    /// within `directByteLimit`, up to and including a message that fills it exactly;
    /// the next is refused and counted. Once they went, their bytes are the budget's again.
    @Test func unpersistedMessagesBehindTheSpillFillTheirBudgetExactly() throws {
        let spill = try SpillFixture(directByteLimit: 24)
        defer { spill.close() }
        try spill.save(SpillFixture.messages(0..<30))
        // 12 bytes each: 8 of topic, 4 of payload.
        let failed = ["f1ab", "f2ab", "f3ab"].map {
            OutboxMessage(topic: "spill/ff", payload: Array($0.utf8), qos: 1, retain: false)
        }
        spill.publisher.sendUnpersisted(failed)
        #expect(spill.counters.value(.errors(.publishQueueFull)) == 1, "two fill the 24 bytes; the third is refused")
        try spill.client.start()
        let received = spill.observer.waitForMessages(on: "spill/#", count: 32)
        #expect(received.map(\.text) == (0..<30).map(String.init) + ["f1ab", "f2ab"])
        #expect(waitUntil { spill.publisher.isDrained })

        // Gone, they gave their bytes back: behind the next spill two fit again.
        spill.publisher.disconnected()
        try spill.save(SpillFixture.messages(30..<60))
        spill.publisher.sendUnpersisted(failed)
        #expect(spill.counters.value(.errors(.publishQueueFull)) == 2, "again two fit and the third is refused")
        spill.publisher.connected()
        let again = spill.observer.waitForMessages(on: "spill/#", count: 64)
        let expected: [String] = (30..<60).map(String.init) + ["f1ab", "f2ab"]
        #expect(Array(again.map(\.text).suffix(32)) == expected)
        #expect(waitUntil { spill.publisher.isDrained })
    }

    /// The messages of a commit that could not be written wait with the persisted ones
    /// decided before them while the hand-over mark cannot be written, not overtake them.
    @Test func unpersistedMessagesOfAFailedCommitWaitWithThoseHeldByTheMark() throws {
        let spill = try SpillFixture(waitingLimit: 200)
        defer { spill.close() }
        let mark = try spill.connectWithTheMarkFailing()
        try spill.save(SpillFixture.messages(1..<3))
        spill.publisher.sendUnpersisted([OutboxMessage(topic: "spill/failed", payload: Array("failed".utf8), qos: 1, retain: false)])
        spill.publisher.send([OutboxMessage(topic: "spill/direct", payload: Array("direct".utf8), qos: 1, retain: false)])
        #expect(spill.observer.waitForMessage(on: "spill/direct") != nil)
        #expect(spill.observer.messages.filter { $0.topic.hasPrefix("spill/") }.map(\.text) == ["0", "direct"])
        try reopen(mark, flags: O_RDWR)
        spill.publisher.pump()
        let received = spill.observer.waitForMessages(on: "spill/#", count: 5)
        #expect(received.map(\.text) == ["0", "direct", "1", "2", "failed"], "each once, in order")
    }

    /// Messages refused for want of a connection keep their place ahead of those that
    /// waited behind them.
    @Test func messagesRefusedForWantOfAConnectionKeepTheirPlace() throws {
        let spill = try SpillFixture(waitingLimit: 200)
        defer { spill.close() }
        spill.publisher.connected()
        // A QoS 0 message first, which libmosquitto does not keep: the whole first
        // handing-over (the window of 100) goes back, ahead of the 51 left waiting.
        let first = OutboxMessage(topic: "spill/0", payload: Array("0".utf8), qos: 0, retain: false)
        try spill.save([first] + SpillFixture.messages(1..<152))
        try spill.client.start()
        let received = spill.observer.waitForMessages(on: "spill/#", count: 152)
        #expect(received.map(\.text) == (0..<152).map(String.init))
    }

    /// A message larger than the broker takes made it close the connection, and
    /// libmosquitto sent the message again on reconnecting, so one reply holding a large
    /// polygon fence kept the bridge off the broker for good (mosquitto: "disconnected due
    /// to oversize packet", every few seconds). It is left out now, persisted or not,
    /// counted and reported; the messages around it go out, on the same connection.
    @Test func aMessageLargerThanTheBrokerTakesIsLeftOutAndTheConnectionStays() throws {
        let spill = try SpillFixture(waitingLimit: 200, brokerConfig: "max_packet_size 4096", maximumPacketBytes: 4_096)
        defer { spill.close() }
        try spill.client.start()
        try spill.save(SpillFixture.messages(0..<1))
        #expect(spill.observer.waitForMessages(on: "spill/#", count: 1).count == 1)
        let large = OutboxMessage(topic: "spill/large", payload: Array(repeating: 0x61, count: 5_000), qos: 1, retain: false)
        try spill.save([large] + SpillFixture.messages(1..<3))
        spill.publisher.send([large, OutboxMessage(topic: "spill/direct", payload: Array("direct".utf8), qos: 1, retain: false)])
        // A message of exactly the limit still goes: 1 + 2 (length) + 2 + 10 + 2 + 1 + 4 078.
        let fitting = OutboxMessage(topic: "spill/full", payload: Array(repeating: 0x62, count: 4_078), qos: 1, retain: false)
        spill.publisher.send([fitting])
        let received = spill.observer.waitForMessages(on: "spill/#", count: 5)
        #expect(received.map(\.topic) == ["spill/0", "spill/1", "spill/2", "spill/direct", "spill/full"])
        #expect(spill.oversized.map(\.topic) == ["spill/large", "spill/large"])
        #expect(spill.oversized.map(\.size) == [5_019, 5_019])
        #expect(spill.counters.value(.errors(.messageTooLarge)) == 2)
        #expect(waitUntil { spill.publisher.isDrained }, "the persisted one left the outbox as if acknowledged")
        #expect(spill.store.watermark.read().handed == 4)
        #expect(try spill.store.pendingMessages().isEmpty, "nothing left to publish again after a restart")
        // Left out as the last persisted message, it counts as acknowledged as well: the
        // acknowledged mark covers it and its row goes at the next pruning.
        try spill.save([large])
        #expect(waitUntil { spill.counters.value(.errors(.messageTooLarge)) == 3 })
        #expect(waitUntil { spill.publisher.isDrained })
        spill.publisher.saveMarks()
        #expect(spill.store.watermark.read().handed == 5)
        #expect(spill.store.watermark.read().acknowledged == 5, "nothing waits for an acknowledgement")
        let drops = spill.broker.log.components(separatedBy: "oversize").count - 1
        #expect(drops == 0, "the broker never closed the connection: \(spill.broker.log.suffix(600))")
    }

    /// A batch taken while connected whose connection drops before it is handed over
    /// (while the hand-over mark is written) waits for the next connection: handed over
    /// then, a QoS 1 message could come in the middle of libmosquitto's reconnection and
    /// never be sent (`BrokerObserver.publish`). The pump is held inside the mark's
    /// failure report (its log line) while the connection drops, from the publisher's side.
    @Test func aBatchTakenBeforeTheConnectionDroppedWaitsForTheNextConnection() throws {
        let gate = LogGate(holding: "outbox mark")
        let spill = try SpillFixture(waitingLimit: 200, logger: Logger(level: .error, sink: gate.write))
        defer { spill.close() }
        let mark = try spill.connectWithTheMarkFailing()
        let persisted = SpillFixture.messages(1..<2)
        try spill.store.save(devices: [], outbox: persisted, then: { ids in spill.publisher.queue(persisted, outboxIDs: ids) })
        spill.publisher.queue([OutboxMessage(topic: "spill/direct", payload: Array("direct".utf8), qos: 1, retain: false)])
        let pumped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            spill.publisher.pump()
            pumped.signal()
        }
        try #require(gate.waitUntilHolding(), "the mark's failure was reported: \(gate.lines)")
        spill.publisher.disconnected()
        gate.open()
        #expect(pumped.wait(timeout: .now() + 30) == .success)
        #expect(spill.publisher.handedOver.acknowledging == 0, "nothing handed over after the connection dropped")
        #expect(spill.publisher.unacknowledged == 3, "the two messages and the report of the mark's failure wait")

        try reopen(mark, flags: O_RDWR)
        spill.publisher.connected()
        let received = spill.observer.waitForMessages(on: "spill/#", count: 3)
        #expect(received.map(\.text) == ["0", "1", "direct"], "each once, in order, on the next connection")
        #expect(waitUntil { spill.publisher.isDrained })
    }

    /// The announcements of a large fence book wait for room (`sendPatiently`): while
    /// connected every message goes, in order, however many more than the queue holds;
    /// while not, what does not fit is not queued (the next connection announces again)
    /// and is counted, and the call does not wait.
    @Test func patientMessagesWaitForRoomWhileConnectedAndAreLeftCountedWhileNot() throws {
        let spill = try SpillFixture(waitingLimit: 10)
        defer { spill.close() }
        func messages(_ name: String, _ count: Int) -> [OutboxMessage] {
            (0..<count).map { OutboxMessage(topic: "spill/\(name)/\($0)", payload: Array("\($0)".utf8), qos: 1, retain: false) }
        }
        spill.publisher.sendPatiently(messages("before", 25))
        #expect(spill.counters.value(.errors(.publishQueueFull)) == 15, "not connected: 10 fit, 15 are left")
        #expect(spill.publisher.unacknowledged == 10)
        try spill.client.start()
        #expect(spill.observer.waitForMessages(on: "spill/before/+", count: 10).map(\.text) == (0..<10).map(String.init))

        spill.publisher.sendPatiently(messages("after", 50))
        let after = spill.observer.waitForMessages(on: "spill/after/+", count: 50)
        #expect(after.map(\.text) == (0..<50).map(String.init), "each once, in order, through a queue of 10")
        #expect(spill.counters.value(.errors(.publishQueueFull)) == 15, "none left while connected")
        #expect(waitUntil { spill.publisher.isDrained })
    }

    /// A message libmosquitto refuses for itself (a topic with a wildcard, which no name
    /// the bridge takes can make) is counted and told to the bridge to log (within a
    /// budget: `BridgeReportsTests`), outside the publisher's lock; the messages around it
    /// go out, in order.
    @Test func aMessageLibmosquittoRefusesIsCountedAndToldAndTheRestGoOut() throws {
        let spill = try SpillFixture(waitingLimit: 200)
        defer { spill.close() }
        try spill.client.start()
        let refused = OutboxMessage(topic: "spill/bad/#", payload: Array("x".utf8), qos: 1, retain: false)
        spill.publisher.send(SpillFixture.messages(0..<1) + [refused] + SpillFixture.messages(1..<2))
        let received = spill.observer.waitForMessages(on: "spill/#", count: 2)
        #expect(received.map(\.topic) == ["spill/0", "spill/1"])
        #expect(spill.counters.value(.errors(.publish)) == 1)
        let told = spill.notHandedOver
        #expect(told.map(\.topic) == ["spill/bad/#"])
        guard case .refused(let error) = told.first?.reason else {
            Issue.record("told \(told)")
            return
        }
        #expect(error.code == 3, "MOSQ_ERR_INVAL: \(error)")
    }

    @Test func repliesPastTheLimitWaitWithinTheirByteBudgetThenAreDropped() {
        let counters = Counters()
        let logger = Logger(level: .error, sink: { _ in })
        let health = StateHealth(logger: logger, counters: counters, messages: OutboundMessages(topics: Topics()), uptime: { 0 })
        let publisher = Publisher(counters: counters, health: health, waitingLimit: 10, directByteLimit: 2_000)
        // 100 bytes each: 15 of topic, 85 of payload.
        let reply = OutboxMessage(topic: "geotify/reply/a", payload: Array(repeating: 0x61, count: 85), qos: 1, retain: false)
        publisher.send(Array(repeating: reply, count: 25))
        #expect(publisher.unacknowledged == 20, "past the limit of 10 messages, replies wait while their bytes fit")
        #expect(publisher.pending == 20, "nothing left in the outbox: what waits is what is pending")
        #expect(counters.value(.errors(.publishQueueFull)) == 5)
    }

    /// A reply's bytes count against `directByteLimit` only while it waits: once handed
    /// over they are the budget's again; and the outbox's messages, which never count
    /// against it, give it nothing when they go. A bridge that has sent many times its
    /// budget in replies and notifications still keeps, while its connection is down, as
    /// many replies past the waiting limit as the budget holds, no more, and hands them
    /// over in order when it is back.
    @Test func aDirectMessageHandedOverGivesItsBytesBackToTheBudget() throws {
        let spill = try SpillFixture(waitingLimit: 10, directByteLimit: 2_000)
        defer { spill.close() }
        // 100 bytes each: 11 of topic, 89 of payload (its number, then padding).
        func replies(_ numbers: Range<Int>) -> [OutboxMessage] {
            numbers.map { number in
                let text = String(number)
                let payload = Array(text.utf8) + Array(repeating: UInt8(ascii: "."), count: 89 - text.utf8.count)
                return OutboxMessage(topic: "spill/reply", payload: payload, qos: 1, retain: false)
            }
        }
        func numbers(_ received: [MQTTMessage]) -> [Int] {
            received.map { Int($0.text.prefix { $0 != "." }) ?? -1 }
        }
        try spill.client.start()
        // 50 replies, 10 at a time (never more than the waiting limit): 2.5 times the
        // budget; and after each 10, 10 notifications through the outbox.
        for round in 0..<5 {
            spill.publisher.send(replies(round * 10..<round * 10 + 10))
            let received = spill.observer.waitForMessages(on: "spill/reply", count: round * 10 + 10)
            try #require(received.count == round * 10 + 10, "round \(round): \(received.count) replies arrived")
            try spill.save(SpillFixture.messages(round * 10..<round * 10 + 10))
            let all = spill.observer.waitForMessages(on: "spill/+", count: round * 20 + 20)
            try #require(all.count == round * 20 + 20, "round \(round): \(all.count) arrived")
        }
        #expect(waitUntil { spill.publisher.isDrained })
        #expect(spill.counters.value(.errors(.publishQueueFull)) == 0)

        spill.publisher.disconnected()
        spill.publisher.send(replies(50..<75))
        #expect(spill.publisher.unacknowledged == 20, "10 within the waiting limit, 10 more within the budget")
        #expect(spill.counters.value(.errors(.publishQueueFull)) == 5, "only those past the budget are refused")
        spill.publisher.connected()
        let received = spill.observer.waitForMessages(on: "spill/reply", count: 70)
        #expect(numbers(received) == Array(0..<70), "each once, in order")
        #expect(waitUntil { spill.publisher.isDrained })
    }

    /// The first fixes of thousands of devices announce their presence in every fence:
    /// retained last values at QoS 0, which have no acknowledgement. Each counts until
    /// libmosquitto has written it, so libmosquitto never holds more than
    /// `unwrittenLimit` of them; and writing them makes room for the next without waiting
    /// for anything to arrive.
    @Test func aFloodOfQoS0LastValuesGoesOutBoundedEachOnceInOrder() throws {
        let count = 3_000
        let inFlight = Mutex<[Int]>([])
        // Sampled at each burst's end once the publisher has handed over what it can. The
        // broker keeps what waits for the observer (QoS 0, past mosquitto's default of
        // 1 000 packets waiting for a subscriber, is dropped when the observer lags).
        let spill = try SpillFixture(waitingLimit: count, brokerConfig: "max_queued_messages 100000") { spill in
            spill.publisher.pump()
            let now = spill.publisher.handedOver.writing
            inFlight.withLock { $0.append(now) }
        }
        defer { spill.close() }
        let messages = (0..<count).map { OutboxMessage(topic: "spill/\($0)", payload: Array("\($0)".utf8), qos: 0, retain: true) }
        try spill.save(messages)
        try spill.client.start()
        let received = spill.observer.waitForMessages(on: "spill/#", count: count)
        #expect(received.count == count, "every one, without waiting for anything to arrive")
        #expect(received.map(\.text).elementsEqual((0..<count).lazy.map(String.init)), "once each, in order")
        #expect(waitUntil { spill.publisher.isDrained })
        let sampled = inFlight.withLock { $0 }
        #expect(sampled.allSatisfy { $0 <= Publisher.unwrittenLimit })
        #expect(sampled.contains { $0 > 0 }, "QoS 0 messages count until written")
        #expect(try spill.store.pendingMessages().isEmpty, "every row handed over: none left to publish after a restart")
    }

    /// A dropped connection takes the QoS 0 messages libmosquitto had not yet written
    /// with it, with no word for each, so they stop counting against `unwrittenLimit`.
    /// Else a publisher that had filled the limit before the drop (a broker that
    /// stalled, then died) would never hand over a QoS 0 message again.
    @Test func qos0MessagesUnwrittenWhenTheConnectionDropsStopCounting() throws {
        let clock = ManualScheduler()
        let spill = try SpillFixture(waitingLimit: 4_000, clock: clock)
        defer { spill.close() }
        try spill.client.start()
        spill.publisher.send([OutboxMessage(topic: "spill/ready", payload: Array("ready".utf8), qos: 1, retain: false)])
        #expect(spill.observer.waitForMessages(on: "spill/ready", count: 1).count == 1)

        // The broker stalls: what the client writes fills the sockets (16 KiB a message,
        // 48 MiB in all, past what loopback sockets hold), the rest waits in
        // libmosquitto up to the limit, then in the publisher.
        spill.broker.pause()
        let payload = [UInt8](repeating: 0x61, count: 16 << 10)
        spill.publisher.send((0..<3_000).map { OutboxMessage(topic: "spill/\($0)", payload: payload, qos: 0, retain: false) })
        #expect(waitUntil { spill.publisher.handedOver.writing == Publisher.unwrittenLimit },
                "libmosquitto holds the limit unwritten: \(spill.publisher.handedOver.writing)")
        // Then it dies: the connection drops with them.
        spill.broker.kill()
        #expect(waitUntil { spill.publisher.handedOver.writing == 0 }, "the messages lost with the connection no longer count")

        // It comes back, and the client reconnects after its delay (on the test's
        // clock): QoS 0 messages go out again, those that waited and a new one.
        try spill.broker.restart()
        let observer = try TestClient(port: spill.broker.port)
        try observer.subscribe("spill/after")
        spill.publisher.send([OutboxMessage(topic: "spill/after", payload: Array("after".utf8), qos: 0, retain: true)])
        #expect(waitUntil(advancing: clock, by: 1, timeout: 30) { observer.messages.contains { $0.topic == "spill/after" } })
        #expect(waitUntil { spill.publisher.isDrained })
    }

    /// A publisher with no client attached and nothing queued, offline.
    static func unattachedPublisher() -> Publisher {
        let counters = Counters()
        let logger = Logger(level: .error, sink: { _ in })
        let health = StateHealth(logger: logger, counters: counters, messages: OutboundMessages(topics: Topics()), uptime: { 0 })
        return Publisher(counters: counters, health: health)
    }

    @Test func itAsksForTheBurstsEndWhenMessagesWaitAndTheWindowHasRoom() {
        let idle = Self.unattachedPublisher()
        idle.connected()
        #expect(!idle.canSendMore, "online, and nothing waits: the burst may wait for what comes")
        let publisher = Self.unattachedPublisher()
        #expect(!publisher.canSendMore, "nothing waits")
        publisher.send([OutboxMessage(topic: "geotify/reply/a", payload: Array("ok".utf8), qos: 1, retain: false)])
        #expect(!publisher.canSendMore, "offline: nothing is handed over before the broker accepted the connection")
        // Online, with no client attached: the message stays waiting, the window free.
        publisher.connected()
        #expect(publisher.canSendMore, "a message waits and the whole window is free")

        let half = Publisher.windowSize / 2, unwrittenHalf = Publisher.unwrittenLimit / 2
        #expect(Publisher.canSendMore(online: true, waiting: true, inFlight: half, unwritten: unwrittenHalf))
        #expect(!Publisher.canSendMore(online: true, waiting: true, inFlight: half + 1, unwritten: 0),
                "more than half the window in flight: the burst may wait for more acknowledgements")
        #expect(!Publisher.canSendMore(online: true, waiting: true, inFlight: 0, unwritten: unwrittenHalf + 1))
        #expect(!Publisher.canSendMore(online: true, waiting: false, inFlight: 0, unwritten: 0))
        #expect(!Publisher.canSendMore(online: false, waiting: true, inFlight: 0, unwritten: 0))
    }

    /// A report of a message written or acknowledged that the publisher does not hold
    /// (none is expected from libmosquitto; this is the guard for one that comes anyway)
    /// counts nothing: the count of QoS 0 messages unwritten never goes below zero, and a
    /// publisher with nothing handed over stays drained.
    @Test func aReportOfAMessageNotHandedOverCountsNothing() {
        let publisher = Self.unattachedPublisher()
        publisher.connected()
        publisher.acknowledged(7)
        #expect(publisher.refused(8) == nil)
        #expect(publisher.handedOver == (acknowledging: 0, writing: 0))
        #expect(publisher.isDrained)
        #expect(publisher.unacknowledged == 0)
    }

    /// What the lanes do: save on the network thread, at the end of each burst, while the
    /// publisher is reading a spill back from the outbox. Handing over inside the save
    /// would read the outbox under the store's own lock (once, the process stopped there).
    @Test func savesWhileASpillIsReadBackKeepTheOrder() throws {
        let backlog = 300, later = 50
        let decided = Atomic<Int>(backlog)
        let spill = try SpillFixture { spill in
            // One more message decided per burst, as a lane would.
            let next = decided.add(1, ordering: .relaxed).oldValue
            if next < backlog + later { _ = try? spill.save(SpillFixture.messages(next..<next + 1)) }
        }
        defer { spill.close() }
        // 300 decided while offline: more than the window (100) and the limit (10), so
        // the outbox is still being read back when the later ones are decided.
        try spill.save(SpillFixture.messages(0..<backlog))
        try spill.client.start()
        let received = spill.observer.waitForMessages(on: "spill/#", count: backlog + later)
        #expect(received.map(\.text) == (0..<backlog + later).map(String.init), "every message once, in row order")
    }

    /// What a SIGKILL while spilling can lose is what the outbox's marks say: rows past
    /// `handed` are published again after a restart, rows in (`acknowledged`, `handed`]
    /// are the possibly lost. Sampled at every burst's end while a backlog five times the
    /// waiting limit (200, twice the window) is read back from the outbox, the mark never
    /// runs more than the in-flight window ahead of the acknowledged (not over messages
    /// waiting in memory), and before the broker is reached it covers nothing.
    @Test func whileSpillingTheMarkCoversOnlyTheInFlightWindowAheadOfTheAcknowledged() throws {
        let backlog = 1_000
        let samples = Mutex<[OutboxWatermark.Marks]>([])
        let spill = try SpillFixture(waitingLimit: 200) { spill in
            let marks = spill.store.watermark.read()
            samples.withLock { $0.append(marks) }
        }
        defer { spill.close() }
        let ids = try spill.save(SpillFixture.messages(0..<backlog))
        #expect(spill.publisher.unacknowledged == 200, "spilled: only the limit waits in memory")
        #expect(spill.store.watermark.read().handed == 0, "nothing handed over yet")
        #expect(try spill.store.pendingMessages().count == backlog, "a restart now would publish every one")
        try spill.client.start()
        let received = spill.observer.waitForMessages(on: "spill/#", count: backlog)
        #expect(received.map(\.text) == (0..<backlog).map(String.init), "every message once, in order")
        #expect(waitUntil { spill.publisher.isDrained })
        let sampled = samples.withLock { $0 }
        #expect(sampled.count > 1)
        #expect(sampled.allSatisfy { $0.handed >= $0.acknowledged && $0.handed - $0.acknowledged <= Int64(Publisher.windowSize) })
        #expect(sampled.contains { $0.handed > 0 && $0.handed < ids.last ?? 0 }, "sampled in the middle of the read-back")
        #expect(spill.store.watermark.read().handed == ids.last, "in the end every row was handed over")
        #expect(try spill.store.pendingMessages().isEmpty)
    }
}

extension PublisherTests {
    /// Read back in chunks after a spill, the messages waiting in memory never pass the
    /// limit, and the acknowledged mark stops just before the oldest row in flight (a
    /// crash then counts every row in flight as possibly lost, none more, none fewer).
    @Test func aReadBackStaysWithinTheLimitAndTheMarkBehindTheOldestInFlight() throws {
        struct Sample { var marks: OutboxWatermark.Marks; var inFlight: Int; var waiting: Int }
        let samples = Mutex<[Sample]>([])
        let spill = try SpillFixture(waitingLimit: 200) { spill in
            // On the network thread, where acknowledgements are handled: nothing moves.
            spill.publisher.saveMarks()
            let (acknowledging, writing) = spill.publisher.handedOver
            let sample = Sample(
                marks: spill.store.watermark.read(), inFlight: acknowledging,
                waiting: spill.publisher.unacknowledged - acknowledging - writing)
            samples.withLock { $0.append(sample) }
        }
        defer { spill.close() }
        try spill.save(SpillFixture.messages(0..<1_000))
        try spill.client.start()
        let received = spill.observer.waitForMessages(on: "spill/#", count: 1_000)
        #expect(received.map(\.text) == (0..<1_000).map(String.init), "every message once, in order")
        #expect(waitUntil { spill.publisher.isDrained })
        let sampled = samples.withLock { $0 }
        #expect(sampled.contains { $0.inFlight > 0 })
        #expect(sampled.allSatisfy { $0.waiting <= 200 }, "at most the limit waits in memory: \(sampled.map(\.waiting).max() ?? 0)")
        #expect(sampled.allSatisfy { $0.marks.acknowledged == $0.marks.handed - Int64($0.inFlight) })
    }
}

/// A publisher that keeps at most `waitingLimit` (10) messages in memory, its store, its
/// client (not started) to a fresh mosquitto, and an observer of `spill/#`.
private final class SpillFixture: Sendable {
    let broker: TestBroker
    let directory: URL
    let store: StateStore
    let publisher: Publisher
    let client: MQTTClient
    let observer: TestClient
    let counters: Counters
    /// The topics of the messages the publisher did not hand over, and why.
    private let notHandedOverMessages: NotHandedOver
    var notHandedOver: [(topic: String, reason: Publisher.NotHandedOver)] { notHandedOverMessages.messages.withLock { $0 } }
    /// The topics and packet sizes of the messages the publisher left out for their size.
    var oversized: [(topic: String, size: Int)] {
        notHandedOver.compactMap { topic, reason in
            guard case .tooLarge(let size, _) = reason else { return nil }
            return (topic, size)
        }
    }
    /// This fixture, for the client's callback; emptied by `close()`.
    private let current: Current

    /// `atBurstEnd` runs on the network thread at the end of each burst, before the
    /// publisher is pumped there (as the bridge's lanes run).
    /// `clock` times the client's reconnect delays.
    /// `brokerConfig` is added to the broker's; `directByteLimit` and `maximumPacketBytes`
    /// are the publisher's, and the messages it leaves out for their size are in
    /// `oversized`. The state's health logs to `logger`.
    init(
        waitingLimit: Int = 10, clock: any Scheduler = SystemScheduler(), brokerConfig: String = "",
        directByteLimit: Int = Publisher.defaultDirectByteLimit, maximumPacketBytes: Int = Settings.largestPacketBytes,
        logger: Logger = Logger(level: .error, sink: { _ in }),
        atBurstEnd: @escaping @Sendable (SpillFixture) -> Void = { _ in }
    ) throws {
        broker = try TestBroker(extraConfig: brokerConfig)
        directory = try makeTemporaryDirectory("publisher")
        store = try StateStore(directory: directory.path)
        let counters = Counters()
        self.counters = counters
        let health = StateHealth(logger: logger, counters: counters, messages: OutboundMessages(topics: Topics()), uptime: { 0 })
        let publisher = Publisher(
            counters: counters, health: health, waitingLimit: waitingLimit, directByteLimit: directByteLimit,
            maximumPacketBytes: maximumPacketBytes)
        self.publisher = publisher
        let current = Current()
        self.current = current
        client = try MQTTClient(options: MQTTOptions(clientID: "spill-\(UUID().uuidString.prefix(8))", port: broker.port), scheduler: clock) { event in
            switch event {
            case .connected: publisher.connected()
            case .published(let id): publisher.acknowledged(id)
            case .caughtUp:
                if let spill = current.fixture.withLock({ $0 }) { atBurstEnd(spill) }
                publisher.pump()
            case .disconnected: publisher.disconnected()
            default: break
            }
        }
        let notHandedOver = NotHandedOver()
        self.notHandedOverMessages = notHandedOver
        publisher.attach(client, store: store) { message, reason in notHandedOver.messages.withLock { $0.append((message.topic, reason)) } }
        observer = try TestClient(port: broker.port)
        try observer.subscribe("spill/#")
        current.fixture.withLock { $0 = self }
    }

    /// Connects, sees a first message through (`spill/0`), then makes the hand-over mark
    /// fail to be written (a failing disk); returns the mark's path, to be made writable
    /// again with `reopen(_:flags:)`.
    func connectWithTheMarkFailing() throws -> String {
        try client.start()
        try save(Self.messages(0..<1))
        guard observer.waitForMessages(on: "spill/#", count: 1).count == 1 else { throw TestSupportError("spill/0 did not arrive") }
        let mark = directory.appendingPathComponent("outbox.handed").path
        try reopen(mark, flags: O_RDONLY)
        return mark
    }

    /// Saves `messages` to the outbox and queues them, as a lane does; returns their rows.
    @discardableResult
    func save(_ messages: [OutboxMessage]) throws -> [Int64] {
        let ids = try store.save(devices: [], outbox: messages, then: { ids in publisher.queue(messages, outboxIDs: ids) })
        publisher.pump()
        return ids
    }

    static func messages(_ numbers: Range<Int>) -> [OutboxMessage] {
        numbers.map { OutboxMessage(topic: "spill/\($0)", payload: Array("\($0)".utf8), qos: 1, retain: false) }
    }

    func close() {
        client.stop()
        current.fixture.withLock { $0 = nil }
        try? FileManager.default.removeItem(at: directory)
    }

    /// What the publisher reported it did not hand over, for the callback given to `attach`.
    private final class NotHandedOver: Sendable {
        let messages = Mutex<[(topic: String, reason: Publisher.NotHandedOver)]>([])
    }

    private final class Current: Sendable {
        let fixture = Mutex<SpillFixture?>(nil)
    }
}
