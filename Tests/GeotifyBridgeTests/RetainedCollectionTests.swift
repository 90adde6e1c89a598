import Foundation
import Synchronization
import Testing
@testable import GeotifyBridge
import GeotifyMQTT
import GeotifyStore
import GeotifyTestSupport
import GeotifyTime

/// The shell of the sweep (`RetainedCollection`): how the collection ends (the SUBACKs and
/// a quiet `settle` on the injected clock, the bound, the timeout) and what it hands over,
/// and that it publishes nothing.
@Suite("RetainedCollection", .serialized, .waiting)
struct RetainedCollectionTests {
    /// What a collection handed to its `clear`, and when.
    private final class Cleared: Sendable {
        let found = Mutex<[[RetainedTopic]]>([])
        func record(_ topics: [RetainedTopic]) { found.withLock { $0.append(topics) } }
        var calls: [[RetainedTopic]] { found.withLock { $0 } }
    }

    private final class Holder: Sendable {
        let collection = Mutex<RetainedCollection?>(nil)
        let routed = Mutex<[String]>([])
    }

    /// How many of a collection's filters have had their SUBACK.
    private final class Acknowledgements: Sendable {
        let count = Mutex(0)
    }

    /// A collection of `sweep` over a client of `broker` on `clock`, handed the client's
    /// events as the bridge hands them (a message it does not take is dropped), counting
    /// its SUBACKs in `acknowledged`; the client is not started.
    private static func collection(
        on broker: TestBroker, clock: ManualScheduler, cleared: Cleared, acknowledged: Acknowledgements = Acknowledgements()
    ) throws -> (client: MQTTClient, collection: RetainedCollection) {
        let holder = Holder()
        let client = try MQTTClient(options: MQTTOptions(clientID: "sweep-\(UUID().uuidString.prefix(8))", port: broker.port), scheduler: clock) { event in
            guard let collection = holder.collection.withLock({ $0 }) else { return }
            switch event {
            case .connected: collection.connected()
            case .subscribed(let id, let granted): if collection.subscribed(id, granted: granted) { acknowledged.count.withLock { $0 += 1 } }
            case .unsubscribed(let id): _ = collection.unsubscribed(id)
            case .message(let message): _ = collection.isActive && collection.take(message)
            default: break
            }
        }
        let collection = RetainedCollection(
            sweep: sweep, client: client, scheduler: clock, logger: Logger(level: .error, sink: { _ in }), counters: Counters(),
            stale: { _ in true }, clear: cleared.record)
        holder.collection.withLock { $0 = collection }
        return (client, collection)
    }

    /// Waits until every filter's SUBACK came and the collection's settle waits on `clock`.
    private static func waitForTheSettle(_ acknowledged: Acknowledgements, on clock: ManualScheduler) {
        #expect(waitUntil { acknowledged.count.withLock { $0 } == sweep.filters.count }, "every filter's SUBACK came")
        #expect(waitUntil { clock.waiting.contains { $0.delay == RetainedCollection.settle } }, "the settle waits on the clock")
    }

    private static let sweep = RetainedSweep(topics: Topics(), kept: DeviceTopic.allCases, discovery: nil, announceLimit: 20)

    /// Acknowledgements that never come (no connection here at all): the collection ends
    /// when the injected clock passes `phaseTimeout`, not before, with what it took.
    @Test func withoutAcknowledgementsTheCollectionEndsOnTheInjectedClock() throws {
        let clock = ManualScheduler()
        let cleared = Cleared()
        let client = try MQTTClient(options: MQTTOptions(clientID: "sweep-\(UUID().uuidString.prefix(8))", port: 1), scheduler: clock) { _ in }
        let collection = RetainedCollection(
            sweep: Self.sweep, client: client, scheduler: clock, logger: Logger(level: .error, sink: { _ in }), counters: Counters(),
            stale: { _ in true }, clear: cleared.record)
        collection.connected()
        #expect(collection.take(MQTTMessage(topic: "geotify/presence/carol/phone/work", payload: [1], retain: true)))
        #expect(collection.take(MQTTMessage(topic: "geotify/state/carol/phone", payload: [1], retain: true)))
        #expect(collection.take(MQTTMessage(topic: "geotify/state/dave/phone", payload: [1], retain: false)), "an echo: taken, not kept")
        #expect(collection.take(MQTTMessage(topic: "geotify/presence/odd", payload: [1], retain: true)), "odd levels: taken, not kept")
        #expect(!collection.take(MQTTMessage(topic: "owntracks/carol/phone", payload: [1], retain: true)), "a position is routed")
        clock.advance(by: RetainedCollection.phaseTimeout - 1)
        #expect(cleared.calls.isEmpty)
        clock.advance(by: 1)
        #expect(cleared.calls.map { $0.map(\.topic) } == [["geotify/presence/carol/phone/work", "geotify/state/carol/phone"]])
        #expect(collection.isActive, "still draining: the unsubscription waits for a connection")
        clock.advance(by: RetainedCollection.phaseTimeout)
        #expect(collection.isActive, "also past the drain's own timeout: the filters are still subscribed, so what comes under them is the sweep's")
        collection.stop()
        #expect(!collection.isActive)
    }

    /// Only what `stale` finds stale is kept and counts toward the bound (ten here): thirty
    /// topics the bridge still owns and two that are none of its come first, then fifteen
    /// stale ones. The collection keeps the first ten stale ones and ends there, and the
    /// five after them are counted in `sweepSkipped`; a stale topic that comes again (the
    /// filters subscribed again after a lost connection) is kept once. It used to count
    /// every retained message toward the bound and end at the tenth topic still owned.
    @Test func onlyStaleTopicsCountTowardTheBound() throws {
        let clock = ManualScheduler()
        let cleared = Cleared()
        let counters = Counters()
        let client = try MQTTClient(options: MQTTOptions(clientID: "sweep-\(UUID().uuidString.prefix(8))", port: 1), scheduler: clock) { _ in }
        let collection = RetainedCollection(
            sweep: Self.sweep, bound: 10, client: client, scheduler: clock, logger: Logger(level: .error, sink: { _ in }),
            counters: counters, stale: { $0.laneDevice?.hasPrefix("gone/") == true }, clear: cleared.record)
        collection.connected()
        let stale = (0..<15).map { "geotify/badge/gone/\($0)" }
        var topics = (0..<30).map { "geotify/state/live/\($0)" } + ["geotify/state/live//odd", "geotify/presence/live"]
        topics += stale.prefix(9) + [stale[0]] + stale.dropFirst(9)
        for topic in topics {
            #expect(collection.take(MQTTMessage(topic: topic, payload: [1], retain: true)))
        }
        #expect(waitUntil { !cleared.calls.isEmpty }, "the bound ended the collection")
        #expect(cleared.calls.map { $0.map(\.topic) } == [Array(stale.prefix(10))])
        #expect(counters.value(.sweepSkipped) == 5)
        collection.stop()
    }

    /// Thirty stale topics retained, a bound of ten: ten are looked at and handed over,
    /// the other twenty counted in `sweepSkipped`; the bound ends the collection and the
    /// UNSUBACKs the sweep, through a real mosquitto (the clock never moves), after which
    /// nothing more is taken.
    @Test func pastTheBoundTopicsAreCountedAndNotLookedAt() throws {
        let broker = try TestBroker()
        let seeder = try TestClient(port: broker.port)
        defer { seeder.disconnect() }
        for index in 0..<30 { try seeder.publish("geotify/state/gone/\(index)", "{}", retain: true) }

        let clock = ManualScheduler()
        let cleared = Cleared()
        let counters = Counters()
        let holder = Holder()
        let client = try MQTTClient(options: MQTTOptions(clientID: "sweep-\(UUID().uuidString.prefix(8))", port: broker.port), scheduler: clock) { event in
            guard let collection = holder.collection.withLock({ $0 }) else { return }
            switch event {
            case .connected: collection.connected()
            case .subscribed(let id, let granted): _ = collection.subscribed(id, granted: granted)
            case .unsubscribed(let id): _ = collection.unsubscribed(id)
            case .message(let message):
                if !(collection.isActive && collection.take(message)) { holder.routed.withLock { $0.append(message.topic) } }
            default: break
            }
        }
        let collection = RetainedCollection(
            sweep: Self.sweep, bound: 10, client: client, scheduler: clock, logger: Logger(level: .error, sink: { _ in }),
            counters: counters, stale: { _ in true }, clear: cleared.record)
        holder.collection.withLock { $0 = collection }
        try client.start()
        defer { client.stop() }
        #expect(waitUntil { !collection.isActive }, "the bound, then the UNSUBACKs came")
        #expect(cleared.calls.count == 1)
        #expect(cleared.calls.first?.count == 10)
        #expect(counters.value(.sweepSkipped) == 20)
        #expect(counters.value(.sweepCleared) == 0, "clearing is the lanes' and the announcer's")
        // Unsubscribed: a topic retained now reaches the client no more. It is published
        // before a barrier the client reads, from the same connection, so it would come
        // first.
        try seeder.publish("geotify/state/gone/late", "{}", retain: true)
        _ = try client.subscribe("barrier", qos: 0)
        #expect(waitUntil {
            (try? seeder.publish("barrier", "end", qos: 0)) != nil && holder.routed.withLock { $0 }.contains("barrier")
        })
        #expect(holder.routed.withLock { $0 }.allSatisfy { $0 == "barrier" }, "nothing under the filters came after the sweep")
    }
    /// Thirty topics retained, within the bound: every one has come with the SUBACKs, the
    /// collection ends when the injected clock has moved `settle` past the last SUBACK
    /// with nothing more (not before), hands over all thirty, and the UNSUBACKs end the
    /// sweep; a subscriber to everything sees nothing of it.
    @Test func afterTheSUBACKsAQuietSettleEndsTheCollection() throws {
        let broker = try TestBroker()
        let seeder = try TestClient(port: broker.port)
        defer { seeder.disconnect() }
        for index in 0..<30 { try seeder.publish("geotify/state/gone/\(index)", "{}", retain: true) }
        let watcher = try TestClient(port: broker.port)
        defer { watcher.disconnect() }
        try watcher.subscribe("#")
        try seeder.publish("watched", "start", qos: 0)
        #expect(watcher.waitForMessage(on: "watched") != nil)

        let clock = ManualScheduler()
        let cleared = Cleared()
        let acknowledged = Acknowledgements()
        let (client, collection) = try Self.collection(on: broker, clock: clock, cleared: cleared, acknowledged: acknowledged)
        try client.start()
        defer { client.stop() }
        Self.waitForTheSettle(acknowledged, on: clock)
        clock.advance(by: RetainedCollection.settle / 2)
        #expect(cleared.calls.isEmpty, "not settled yet")
        clock.advance(by: RetainedCollection.settle / 2)
        #expect(waitUntil { cleared.calls.count == 1 })
        #expect(Set(cleared.calls.first?.map(\.topic) ?? []) == Set((0..<30).map { "geotify/state/gone/\($0)" }))
        #expect(waitUntil { !collection.isActive }, "the UNSUBACKs ended the sweep")
        try seeder.publish("watched", "end", qos: 0)
        #expect(watcher.waitForMessage(on: "watched", where: { $0.text == "end" }) != nil)
        #expect(watcher.messages.allSatisfy { $0.topic == "watched" || $0.topic.hasPrefix("geotify/state/gone/") },
                "the sweep published nothing: \(watcher.messages.map(\.topic).filter { !$0.hasPrefix("geotify/state/gone/") })")
    }

    /// A retained message that comes after the last SUBACK (mosquitto sends the last
    /// filter's right after it) shows the messages still coming: the settle's look finds
    /// it and looks again `settle` later, and only a look with none since ends the
    /// collection, with that message among those handed over.
    @Test func aRetainedMessageAfterTheSUBACKsPutsTheEndOffBySettle() throws {
        let broker = try TestBroker()
        let clock = ManualScheduler()
        let cleared = Cleared()
        let acknowledged = Acknowledgements()
        let (client, collection) = try Self.collection(on: broker, clock: clock, cleared: cleared, acknowledged: acknowledged)
        try client.start()
        defer { client.stop() }
        Self.waitForTheSettle(acknowledged, on: clock)
        #expect(collection.take(MQTTMessage(topic: "geotify/badge/gone/1", payload: [1], retain: true)))
        clock.advance(by: RetainedCollection.settle)
        #expect(cleared.calls.isEmpty, "a message came since the SUBACKs: not settled")
        clock.advance(by: RetainedCollection.settle)
        #expect(cleared.calls.map { $0.map(\.topic) } == [["geotify/badge/gone/1"]])
        #expect(waitUntil { !collection.isActive }, "the UNSUBACKs ended the sweep")
    }

    /// A drain whose unsubscription could not be sent (the connection lost as the
    /// collection ended; here there was none yet) unsubscribes at the next connection, and
    /// its UNSUBACKs end the sweep.
    @Test func anUnsubscriptionThatCouldNotBeSentIsSentAtTheNextConnection() throws {
        let broker = try TestBroker()
        let clock = ManualScheduler()
        let cleared = Cleared()
        let (client, collection) = try Self.collection(on: broker, clock: clock, cleared: cleared)
        collection.connected()
        clock.advance(by: RetainedCollection.phaseTimeout)
        #expect(cleared.calls.count == 1, "the collection ended at its timeout")
        #expect(collection.isActive, "the unsubscription could not be sent")
        try client.start()
        defer { client.stop() }
        #expect(waitUntil { !collection.isActive }, "unsubscribed at the connection, and the UNSUBACKs ended the sweep")
        #expect(cleared.calls.count == 1, "handed over once")
    }

    /// A broker whose access rules refuse some of the filters (one, or all): their SUBACKs
    /// (0x80; MQTT 5 0x87) count as acknowledgements, so once they are all in and the
    /// retained messages of the other filters have come (mosquitto 2.0 sends those after
    /// the SUBACK), the collection ends within two `settle`s of the injected clock, not at
    /// `phaseTimeout`. What is retained under a refused filter never comes, so only what
    /// came under the others is handed over. Each refusal is logged with its filter and
    /// counted in `sweepRefused`, and the UNSUBACKs end the sweep.
    @Test(arguments: [MQTTProtocolVersion.v311, .v5], [["geotify/state/#"], RetainedCollectionTests.sweep.filters])
    func aFilterTheBrokerRefusesIsAcknowledgedAndNothingUnderItIsFound(version: MQTTProtocolVersion, refused: [String]) throws {
        let directory = try makeTemporaryDirectory("sweep-refused")
        defer { try? FileManager.default.removeItem(at: directory) }
        let security = try BrokerDynamicSecurity(
            path: directory.appendingPathComponent("dynamic-security.json").path, user: "sweeper", password: "sweep-secret",
            rules: [.subscribe("#")] + refused.map { .refuseSubscribing($0) })
        let broker = try TestBroker(extraConfig: security.brokerConfig)
        let seeder = try TestClient(port: broker.port)
        defer { seeder.disconnect() }
        let retained = ["geotify/presence/gone/1/home", "geotify/state/gone/1", "geotify/tracker/gone/1", "geotify/occupancy/shared/gone"]
        for topic in retained { try seeder.publish(topic, "x", retain: true) }
        // The filters here are a fixed start and wildcards after it.
        let readable = Set(retained.filter { topic in !refused.contains { topic.hasPrefix($0.prefix { $0 != "#" && $0 != "+" }) } })

        let clock = ManualScheduler()
        let cleared = Cleared()
        let counters = Counters()
        let logged = Mutex<[String]>([])
        let holder = Holder()
        let acknowledged = Mutex(0)
        let taken = Mutex<Set<String>>([])
        var options = MQTTOptions(clientID: "sweep-\(UUID().uuidString.prefix(8))", port: broker.port)
        options.username = "sweeper"
        options.password = "sweep-secret"
        options.protocolVersion = version
        let client = try MQTTClient(options: options, scheduler: clock) { event in
            guard let collection = holder.collection.withLock({ $0 }) else { return }
            switch event {
            case .connected: collection.connected()
            case .subscribed(let id, let granted): if collection.subscribed(id, granted: granted) { acknowledged.withLock { $0 += 1 } }
            case .unsubscribed(let id): _ = collection.unsubscribed(id)
            case .message(let message):
                if collection.isActive && collection.take(message) { taken.withLock { _ = $0.insert(message.topic) } }
            default: break
            }
        }
        let collection = RetainedCollection(
            sweep: Self.sweep, client: client, scheduler: clock,
            logger: Logger(level: .warning, sink: { line in logged.withLock { $0.append(line) } }), counters: counters,
            stale: { _ in true }, clear: cleared.record)
        holder.collection.withLock { $0 = collection }
        try client.start()
        defer { client.stop() }
        #expect(waitUntil { acknowledged.withLock { $0 } == Self.sweep.filters.count }, "every filter's SUBACK came, refused or not")
        #expect(waitUntil { taken.withLock { $0 } == readable }, "what the other filters hold came")
        #expect(counters.value(.sweepRefused) == refused.count)
        for filter in refused {
            #expect(logged.withLock { $0 }.contains { $0.contains("refused the subscription to \(filter) (its access rules; sweep_refused)") })
        }
        // The settle begun at the last SUBACK sees the retained messages that came after
        // it and looks again; the next is quiet.
        #expect(waitUntil(advancing: clock, by: RetainedCollection.settle) { !cleared.calls.isEmpty })
        #expect(clock.uptime <= 2 * RetainedCollection.settle, "ended by the settle, not \(RetainedCollection.phaseTimeout) s after the start")
        #expect(cleared.calls.count == 1)
        #expect(Set(cleared.calls.first?.map(\.topic) ?? []) == readable)
        #expect(waitUntil { !collection.isActive }, "the UNSUBACKs ended the sweep")
        collection.stop()
        #expect(!logged.withLock { $0 }.contains { $0.contains("more stale retained topics") }, "none skipped, none warned about")
    }

    /// A connection that acknowledges the first request of each round (the SUBSCRIBEs at
    /// a connection, the UNSUBSCRIBEs of the drain) from a thread of its own, started as
    /// that request is sent and let reach the collection (where it waits for the lock, or
    /// is let in) before the next request is sent: what a network loop does that reads the
    /// acknowledgement while the bridge still sends the later filters' requests, as one
    /// stalled between two filters did. The other requests' acknowledgements are the test's.
    private final class EarlyAcknowledgement: SubscriptionRequests {
        enum Kind { case subscribe, unsubscribe }
        struct Request {
            var kind: Kind
            var filter: String
            var id: Int32
        }

        private let requests = Mutex<[Request]>([])
        private let collection = Mutex<RetainedCollection?>(nil)
        /// Signalled as each early acknowledgement's thread is done with it.
        private let handedIn = DispatchSemaphore(value: 0)

        func attach(_ collection: RetainedCollection) { self.collection.withLock { $0 = collection } }

        /// The requests sent, in order.
        var sent: [Request] { requests.withLock { $0 } }

        func subscribe(_ filter: String, qos: Int) throws(MQTTError) -> Int32 { send(.subscribe, filter) }
        func unsubscribe(_ filter: String) throws(MQTTError) -> Int32 { send(.unsubscribe, filter) }

        /// Waits until the early acknowledgement of a round has been handed in.
        func waitForTheEarlyAcknowledgement() -> Bool { handedIn.wait(timeout: .now() + 10) == .success }

        private func send(_ kind: Kind, _ filter: String) -> Int32 {
            let (id, first) = requests.withLock { requests in
                let first = !requests.contains { $0.kind == kind }
                requests.append(Request(kind: kind, filter: filter, id: Int32(requests.count + 1)))
                return (Int32(requests.count), first)
            }
            guard first, let collection = collection.withLock({ $0 }) else { return id }
            let thread = Mutex<ThreadInKernel?>(nil)
            let done = Atomic<Bool>(false)
            Thread.detachNewThread { [handedIn] in
                thread.withLock { $0 = try? ThreadInKernel.current() }
                switch kind {
                case .subscribe: _ = collection.subscribed(id, granted: [0])
                case .unsubscribe: _ = collection.unsubscribed(id)
                }
                done.store(true, ordering: .releasing)
                handedIn.signal()
            }
            let reached = waitUntil {
                done.load(ordering: .acquiring) || thread.withLock { $0 }?.waitsInFutex == true
            }
            #expect(reached, "the acknowledgement's thread reached the collection")
            return id
        }
    }

    /// Every filter's SUBSCRIBE is recorded before any SUBACK is looked at, and every
    /// UNSUBSCRIBE before any UNSUBACK: the first filter's acknowledgement, read while
    /// the later filters' requests are still being sent, neither starts the settle (while
    /// the later filters' retained messages are still to come) nor ends the sweep (while
    /// the later filters are still subscribed, so that what comes under them, the bridge's
    /// own clearances echoed, would be routed as input and counted unrouted). Each waits
    /// for the acknowledgements of all.
    @Test func anEarlyAcknowledgementWaitsForTheRequestsOfTheOtherFilters() throws {
        try #require(Self.sweep.filters.count > 1)
        let clock = ManualScheduler()
        let cleared = Cleared()
        let connection = EarlyAcknowledgement()
        let collection = RetainedCollection(
            sweep: Self.sweep, client: connection, scheduler: clock, logger: Logger(level: .error, sink: { _ in }),
            counters: Counters(), stale: { _ in true }, clear: cleared.record)
        connection.attach(collection)
        func settles() -> Bool { clock.waiting.contains { $0.delay == RetainedCollection.settle } }

        collection.connected()
        #expect(connection.waitForTheEarlyAcknowledgement())
        let subscriptions = connection.sent.filter { $0.kind == .subscribe }
        #expect(subscriptions.map(\.filter) == Self.sweep.filters)
        #expect(!settles(), "one filter's SUBACK of \(subscriptions.count): the collection does not settle yet")
        for request in subscriptions.dropFirst() {
            #expect(collection.subscribed(request.id, granted: [0]))
        }
        #expect(settles(), "every filter's SUBACK came: the collection settles")

        clock.advance(by: RetainedCollection.settle)
        #expect(cleared.calls.count == 1, "the collection ended")
        #expect(connection.waitForTheEarlyAcknowledgement())
        collection.finishQueuedWork()
        let unsubscriptions = connection.sent.filter { $0.kind == .unsubscribe }
        #expect(unsubscriptions.map(\.filter) == Self.sweep.filters)
        #expect(collection.isActive, "one filter's UNSUBACK of \(unsubscriptions.count): the sweep goes on")
        for request in unsubscriptions.dropFirst() {
            #expect(collection.unsubscribed(request.id))
        }
        collection.finishQueuedWork()
        #expect(!collection.isActive, "every filter's UNSUBACK came: the sweep ended")
    }
}
