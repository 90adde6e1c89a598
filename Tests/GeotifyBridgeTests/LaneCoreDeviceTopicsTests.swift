import Testing
@testable import GeotifyBridge

/// Which retained topics a lane keeps for each device (`deviceTopics`), through the pure
/// core: a topic left out is never built, in a first fix, a transition, a badge reset
/// or the republishing after a connection, and nothing else changes.
@Suite("Lane core: the device topics kept")
struct LaneCoreDeviceTopicsTests {
    static let home = LaneCoreTests.home
    static let away = LaneCoreTests.away

    /// The outbox topics of a first fix, an entry and a badge reset, and what is
    /// republished after a connection (topics, and which of them are cleared, with an
    /// empty payload), with `kept` device topics.
    static func published(keeping kept: [DeviceTopic]) throws -> (outbox: [String], republished: [String], cleared: [String], state: String?) {
        var lane = try LaneFixture(fences: LaneCoreTests.fences) { $0.deviceTopics = kept }
        var outbox = lane.ownTracks("alice/phone", away.0, away.1).outboxTopics
        lane.now += 60
        let entry = lane.ownTracks("alice/phone", home.0, home.1)
        outbox += entry.outboxTopics
        outbox += lane.command("alice/phone", #"{"action":"resetBadge"}"#).outboxTopics
        lane.core.republishAll()
        let direct = lane.advance(0.2).direct
        #expect(direct.allSatisfy { $0.retain && $0.qos == 0 })
        return (outbox, direct.filter { !$0.payload.isEmpty }.map(\.topic), direct.filter(\.payload.isEmpty).map(\.topic),
                entry.outboxText("geotify/state/alice/phone"))
    }

    @Test func withTheStateDocumentAloneItCarriesWhatTheOthersWouldHaveSaid() throws {
        let only = try Self.published(keeping: [.state])
        #expect(only.outbox == [
            "geotify/state/alice/phone",
            "geotify/event/alice/phone", "owntracks/alice/phone/event", "geotify/state/alice/phone",
            "geotify/state/alice/phone",
        ], "one message for the first fix instead of one a fence; three a transition instead of six")
        #expect(only.republished == ["geotify/state/alice/phone"])
        #expect(only.cleared == [
            "geotify/presence/alice/phone/home", "geotify/presence/alice/phone/office", "geotify/presence/alice/phone/school",
            "geotify/tracker/alice/phone", "geotify/badge/alice/phone",
        ], "after a connection, what a start that kept the others left retained is cleared, shared fences' presence too")
        let state = try #require(only.state)
        #expect(state.contains(#""tracker":"home","inside":[{"fence":"home","note":"Welcome home"}],"badge":1"#))
    }

    @Test(arguments: DeviceTopic.allCases)
    func aTopicLeftOutIsTheOnlyThingMissingAndIsCleared(_ left: DeviceTopic) throws {
        let all = try Self.published(keeping: DeviceTopic.allCases)
        let fewer = try Self.published(keeping: DeviceTopic.allCases.filter { $0 != left })
        let prefix = "geotify/\(left.rawValue)/"
        #expect(all.outbox.contains { $0.hasPrefix(prefix) } && all.republished.contains { $0.hasPrefix(prefix) })
        #expect(all.cleared.isEmpty, "nothing is cleared while every topic is kept")
        #expect(fewer.outbox == all.outbox.filter { !$0.hasPrefix(prefix) })
        #expect(fewer.republished == all.republished.filter { !$0.hasPrefix(prefix) })
        #expect(!fewer.cleared.isEmpty && fewer.cleared.allSatisfy { $0.hasPrefix(prefix) })
    }
}
