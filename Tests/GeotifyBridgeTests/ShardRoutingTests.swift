import Foundation
import GeotifyCore
import GeotifyMQTT
import GeotifyStore
import GeotifyTestSupport
import Testing
@testable import GeotifyBridge

/// One instance of several: which messages it takes, the topics it speaks on, and how
/// the occupancy parts of all instances become one total.
@Suite("Shard routing")
struct ShardRoutingTests {
    let devices = (0..<300).map { "u\($0)/p" }

    func router(_ shard: ShardAssignment?) throws -> MessageRouter {
        var settings = Settings()
        settings.shard = shard
        return try MessageRouter(settings: settings, topics: Topics(prefix: "geotify", shard: shard))
    }

    /// Three instances' routers, with `locationTopic` as the plain positions' filter.
    func routers(locationTopic: String) throws -> [MessageRouter] {
        try (0..<3).map { index in
            var settings = Settings()
            settings.locationTopic = locationTopic
            settings.shard = try ShardAssignment(index: index, count: 3)
            return try MessageRouter(settings: settings, topics: Topics(prefix: "geotify", shard: settings.shard))
        }
    }

    /// Expects exactly the instance that owns `device` to take `topic`, and every
    /// instance to leave `unfitting` unrouted (none drops it as another's).
    func expectOnlyTheOwner(among routers: [MessageRouter], takes topic: String, of device: String, butNoneTakes unfitting: String) {
        for router in routers {
            let unrouted: Bool
            if case .unrouted = router.route(message(unfitting), arrival: 0) { unrouted = true } else { unrouted = false }
            #expect(unrouted, "\(unfitting)")
        }
        let taken = routers.indices.filter { index in
            if case .lane = routers[index].route(message(topic), arrival: 0) { return true }
            return false
        }
        #expect(taken == [ShardAssignment.shard(of: device, among: routers.count)], "\(topic)")
    }

    func message(_ topic: String, _ payload: String = "", retain: Bool = false) -> MQTTMessage {
        MQTTMessage(topic: topic, payload: Array(payload.utf8), qos: 1, retain: retain)
    }

    @Test func eachPositionAndCommandReachesExactlyOneInstance() throws {
        let routers = try (0..<3).map { try router(ShardAssignment(index: $0, count: 3)) }
        for device in devices {
            for topic in ["owntracks/\(device)", "geotify/location/\(device)", "geotify/cmd/\(device)"] {
                let taken = routers.indices.filter { index in
                    if case .lane = routers[index].route(message(topic), arrival: 0) { return true }
                    return false
                }
                #expect(taken == [ShardAssignment.shard(of: device, among: 3)], "\(topic)")
            }
        }
    }

    /// A topic that does not fit the filters (an OwnTracks topic with a level too many)
    /// is no position of any instance's: every instance says so, none drops it as
    /// another's.
    @Test func aTopicThatFitsNoFilterIsUnroutedOnEveryInstance() throws {
        let routers = try (0..<3).map { try router(ShardAssignment(index: $0, count: 3)) }
        for device in devices.prefix(30) {
            for topic in ["owntracks/\(device)/extra", "owntracks/\(device)/a/b"] {
                for router in routers {
                    let unrouted: Bool
                    if case .unrouted = router.route(message(topic), arrival: 0) { unrouted = true } else { unrouted = false }
                    #expect(unrouted, "\(topic)")
                }
            }
        }
    }

    /// Another instance's positions are dropped unread and counted in
    /// `messages_other_shards`, not in `messages_received` (docs/scaling.md), through a
    /// real bridge: instance 0 of 2 is sent two positions of a device instance 1 owns and
    /// one of its own.
    @Test(.waiting) func anotherInstancesPositionsAreCountedAsSuch() throws {
        let shard = try ShardAssignment(index: 0, count: 2)
        let foreign = try #require(devices.first { !shard.owns($0) })
        let own = try #require(devices.first { shard.owns($0) })
        let harness = try BridgeHarness { $0.shard = shard }
        let bridge = try #require(harness.bridge)
        for tst in [10, 20] { try harness.ownTracks(foreign, 52.52, 13.405, tst: tst) }
        try harness.ownTracks(own, 52.52, 13.405, tst: 10)
        #expect(harness.observer.waitForMessage(on: "geotify/state/\(own)") != nil, "its own device's position was evaluated")
        #expect(waitUntil { bridge.counters.value(.messagesOtherShards) == 2 })
        #expect(bridge.counters.value(.messagesReceived) == 1)
        #expect(!harness.observer.messages.contains { $0.topic.hasSuffix("/\(foreign)") }, "nothing published for the other's device")
    }

    /// A filter ending in `+/#` (`positions/+/#`) needs a level for its `#`: a topic one
    /// level short (`positions/u0`) fits no filter, so every instance leaves it unrouted
    /// and none drops it as another's; one level more reaches exactly its owner.
    @Test func aTopicShortOfAFiltersHashIsUnroutedOnEveryInstance() throws {
        let routers = try routers(locationTopic: "positions/+/#")
        for user in (0..<30).map({ "u\($0)" }) {
            expectOnlyTheOwner(among: routers, takes: "positions/\(user)/p", of: "\(user)/p", butNoneTakes: "positions/\(user)")
        }
    }

    /// Under a filter of a single `+` level (`positions/+`) a topic with a level more
    /// fits no filter: no instance takes it for another's device by the hash of its
    /// first levels (the quick hash of a device counts the topic's levels).
    @Test func aTopicALevelDeeperThanASinglePlusFilterIsUnroutedOnEveryInstance() throws {
        let routers = try routers(locationTopic: "positions/+")
        for user in (0..<30).map({ "u\($0)" }) {
            expectOnlyTheOwner(among: routers, takes: "positions/\(user)", of: user, butNoneTakes: "positions/\(user)/p")
        }
    }

    /// A topic with an empty level names no usable device. Like any message, it is one
    /// instance's to answer: the instance its device's hash picks refuses it with its
    /// reason, the others count it as another's, so it is refused and counted once.
    @Test func aTopicWithAnEmptyLevelIsRefusedByOneInstance() throws {
        let routers = try (0..<3).map { try router(ShardAssignment(index: $0, count: 3)) }
        for user in (0..<30).map({ "u\($0)" }) {
            for (topic, device) in [("owntracks/\(user)/", "\(user)/"), ("geotify/location/\(user)//p", "\(user)//p"),
                                    ("geotify/cmd/\(user)/", "\(user)/")] {
                let refusing = routers.indices.filter { index in
                    switch routers[index].route(message(topic), arrival: 0) {
                    case .refused(let error, _): return error.code == .invalidTopic
                    case .otherShard: return false
                    default:
                        Issue.record("\(topic) was neither refused nor another's")
                        return false
                    }
                }
                #expect(refusing == [ShardAssignment.shard(of: device, among: 3)], "\(topic)")
            }
        }
    }

    @Test func filtersWithALiteralAfterAWildcardRouteTheSame() throws {
        var settings = Settings()
        settings.ownTracksTopic = "trackers/+/pos"
        settings.shard = try ShardAssignment(index: 1, count: 3)
        let router = try MessageRouter(settings: settings, topics: Topics(prefix: "geotify", shard: settings.shard))
        for device in devices.map({ $0.replacingOccurrences(of: "/", with: "-") }) {
            let taken: Bool
            if case .lane = router.route(message("trackers/\(device)/pos"), arrival: 0) { taken = true } else { taken = false }
            #expect(taken == (ShardAssignment.shard(of: device, among: 3) == 1))
        }
    }

    @Test func otherShardsMessagesAreDroppedBeforeAnythingIsRead() throws {
        let router = try router(ShardAssignment(index: 0, count: 3))
        let foreign = try #require(devices.first { ShardAssignment.shard(of: $0, among: 3) != 0 })
        guard case .otherShard = router.route(message("owntracks/\(foreign)", "not even JSON"), arrival: 0) else {
            Issue.record("a position of another shard's device is dropped unread")
            return
        }
        guard case .lane = try self.router(nil).route(message("owntracks/\(foreign)"), arrival: 0) else {
            Issue.record("one instance takes every device")
            return
        }
    }

    @Test func anInstanceSpeaksForItselfOnTopicsOfItsOwn() throws {
        let shard = try ShardAssignment(index: 2, count: 3)
        let topics = Topics(prefix: "geotify", shard: shard)
        #expect(topics.status == "geotify/shard/2/status")
        #expect(topics.stats == "geotify/shard/2/stats")
        #expect(topics.occupancy(owner: "shared", fence: "plaza") == "geotify/shard/2/occupancy/shared/plaza")
        #expect(topics.occupancyTotal(owner: "shared", fence: "plaza") == "geotify/occupancy/shared/plaza")
        #expect(topics.event("u1/p") == "geotify/event/u1/p")
        #expect(topics.occupancyParts == "geotify/shard/2/occupancy/#")
        #expect(Topics(prefix: "geotify", shard: try ShardAssignment(index: 0, count: 3)).occupancyParts == "geotify/shard/+/occupancy/#")
        let single = Topics(prefix: "geotify", shard: try ShardAssignment(index: 0, count: 1))
        #expect(single.status == "geotify/status" && single.occupancyParts == nil, "0/1 is one instance")
        let discovery = HomeAssistantDiscovery(topics: topics).configs(device: "u1/p", fences: [])
        #expect(discovery.allSatisfy { String(decoding: $0.payload, as: UTF8.self).contains(#""topic":"geotify/shard/2/status""#) },
                "the entities of its devices are available while it is")
    }

    @Test func instanceZeroPublishesTheSumOfTheParts() throws {
        let topics = Topics(prefix: "geotify", shard: try ShardAssignment(index: 0, count: 3))
        let occupancy = ShardOccupancy(topics: topics, occupancy: Occupancy())
        func total(after part: OccupancyPart) -> [String] {
            received(part, by: occupancy).filter { $0.topic == "geotify/occupancy/shared/plaza" }.map { String(decoding: $0.payload, as: UTF8.self) }
        }
        #expect(total(after: OccupancyPart(shard: 1, owner: "shared", fence: "plaza", count: 4, retained: false)) == ["4"])
        #expect(total(after: OccupancyPart(shard: 2, owner: "shared", fence: "plaza", count: 3, retained: false)) == ["7"])
        #expect(total(after: OccupancyPart(shard: 2, owner: "shared", fence: "plaza", count: 3, retained: false)) == [], "no change, nothing published")
        #expect(total(after: OccupancyPart(shard: 1, owner: "shared", fence: "plaza", count: nil, retained: false)) == ["3"])
        #expect(total(after: OccupancyPart(shard: 2, owner: "shared", fence: "plaza", count: nil, retained: false)) == [""], "no parts: the total is cleared")
        let stale = received(OccupancyPart(shard: 5, owner: "shared", fence: "plaza", count: 9, retained: true), by: occupancy)
        #expect(stale.map(\.topic) == ["geotify/shard/5/occupancy/shared/plaza"] && stale[0].payload.isEmpty,
                "the part of an instance that no longer exists is cleared, not added")
    }

    /// After a restart instance 0 reads every part the broker kept, one message after
    /// another: the total waits until a tick went by with none arriving, so Home
    /// Assistant never sees the sum of the first parts only (the zone empty for a
    /// moment). A part published live is added at once.
    @Test func instanceZeroAddsUpTheRetainedPartsOnceAllAreRead() throws {
        let topics = Topics(prefix: "geotify", shard: try ShardAssignment(index: 0, count: 3))
        let occupancy = ShardOccupancy(topics: topics, occupancy: Occupancy())
        func totals(_ messages: [OutboxMessage]) -> [String] {
            messages.filter { $0.topic == "geotify/occupancy/shared/plaza" }.map { String(decoding: $0.payload, as: UTF8.self) }
        }
        func settled() -> [String] {
            var queued: [OutboxMessage] = []
            occupancy.settle { queued += $0 }
            return totals(queued)
        }
        #expect(totals(received(OccupancyPart(shard: 0, owner: "shared", fence: "plaza", count: 0, retained: true), by: occupancy)).isEmpty)
        #expect(settled().isEmpty, "a part arrived since the last tick")
        #expect(totals(received(OccupancyPart(shard: 1, owner: "shared", fence: "plaza", count: 2, retained: true), by: occupancy)).isEmpty)
        #expect(settled().isEmpty, "still arriving")
        #expect(settled() == ["2"], "a quiet tick: the sum of every part")
        #expect(settled().isEmpty, "once")
        #expect(totals(received(OccupancyPart(shard: 2, owner: "shared", fence: "plaza", count: 1, retained: false), by: occupancy)) == ["3"],
                "a live part is added at once")
    }

    @Test func anInstanceCorrectsItsOwnRetainedPart() throws {
        let topics = Topics(prefix: "geotify", shard: try ShardAssignment(index: 1, count: 3))
        let counts = Occupancy()
        counts.apply([OccupancyChange(owner: "shared", fence: "plaza", device: "u1/p", inside: true)]) { _ in }
        let occupancy = ShardOccupancy(topics: topics, occupancy: counts)
        let corrected = received(OccupancyPart(shard: 1, owner: "shared", fence: "plaza", count: 5, retained: true), by: occupancy)
        #expect(corrected.map { String(decoding: $0.payload, as: UTF8.self) } == ["1"])
        let cleared = received(OccupancyPart(shard: 1, owner: "shared", fence: "gone", count: 2, retained: true), by: occupancy)
        #expect(cleared.map(\.topic) == ["geotify/shard/1/occupancy/shared/gone"] && cleared[0].payload.isEmpty)
        #expect(received(OccupancyPart(shard: 1, owner: "shared", fence: "plaza", count: 5, retained: false), by: occupancy).isEmpty,
                "only what the broker kept is corrected, not its own live echo")
        #expect(OccupancyPart(message("geotify/shard/1/occupancy/shared/plaza", "x1"), topics: topics) == nil)
        #expect(OccupancyPart(message("geotify/shard/1/occupancy/shared/plaza", "12", retain: true), topics: topics)
                == OccupancyPart(shard: 1, owner: "shared", fence: "plaza", count: 12, retained: true))
    }

    /// What `occupancy` queues to publish on reading `part`.
    private func received(_ part: OccupancyPart, by occupancy: ShardOccupancy) -> [OutboxMessage] {
        var queued: [OutboxMessage] = []
        occupancy.receive(part) { queued += $0 }
        return queued
    }

    /// An instance whose retained part agrees with its own count leaves it as it is: only
    /// a part that disagrees is corrected.
    @Test func aRetainedPartThatAgreesIsLeftAsItIs() throws {
        let topics = Topics(prefix: "geotify", shard: try ShardAssignment(index: 1, count: 3))
        let counts = Occupancy()
        counts.apply([OccupancyChange(owner: "shared", fence: "plaza", device: "u1/p", inside: true)]) { _ in }
        let occupancy = ShardOccupancy(topics: topics, occupancy: counts)
        #expect(received(OccupancyPart(shard: 1, owner: "shared", fence: "plaza", count: 1, retained: true), by: occupancy).isEmpty)
    }

    /// After a reshard from four instances to three, the part of instance 3 (the first
    /// index past the count) is cleared, not added to the total; a part already cleared
    /// (its own empty message coming back) is not cleared again, which would go on
    /// without end.
    @Test func thePartsOfTheInstancesPastTheCountAreClearedOnce() throws {
        let topics = Topics(prefix: "geotify", shard: try ShardAssignment(index: 0, count: 3))
        let occupancy = ShardOccupancy(topics: topics, occupancy: Occupancy())
        let stale = received(OccupancyPart(shard: 3, owner: "shared", fence: "plaza", count: 2, retained: true), by: occupancy)
        #expect(stale.map(\.topic) == ["geotify/shard/3/occupancy/shared/plaza"] && stale.allSatisfy(\.payload.isEmpty))
        #expect(received(OccupancyPart(shard: 3, owner: "shared", fence: "plaza", count: nil, retained: false), by: occupancy).isEmpty)
        var settled: [OutboxMessage] = []
        occupancy.settle { settled += $0 }
        occupancy.settle { settled += $0 }
        #expect(settled.isEmpty, "no total of a part not added")
    }

    /// A part cleared for a fence whose total instance 0 never published clears nothing:
    /// no empty retained message for a total that was never there, live or retained.
    @Test func aClearedPartOfAFenceWithNoTotalPublishesNothing() throws {
        let topics = Topics(prefix: "geotify", shard: try ShardAssignment(index: 0, count: 3))
        let occupancy = ShardOccupancy(topics: topics, occupancy: Occupancy())
        #expect(received(OccupancyPart(shard: 1, owner: "shared", fence: "plaza", count: nil, retained: false), by: occupancy).isEmpty)
        #expect(received(OccupancyPart(shard: 2, owner: "shared", fence: "park", count: nil, retained: true), by: occupancy).isEmpty)
        var settled: [OutboxMessage] = []
        occupancy.settle { settled += $0 }
        occupancy.settle { settled += $0 }
        #expect(settled.isEmpty)
    }

    /// A count is at most nine digits: a longer payload is not a part.
    @Test func aPartOfMoreThanNineDigitsIsNoPart() throws {
        let topics = Topics(prefix: "geotify", shard: try ShardAssignment(index: 0, count: 3))
        #expect(OccupancyPart(message("geotify/shard/1/occupancy/shared/plaza", "123456789"), topics: topics)?.count == 123_456_789)
        #expect(OccupancyPart(message("geotify/shard/1/occupancy/shared/plaza", "1234567890"), topics: topics) == nil)
    }
}
