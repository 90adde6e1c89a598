import Testing
import GeotifyBridge
import GeotifyTestSupport

@Suite("Topic filters")
struct TopicFilterTests {
    @Test func ownTracksTopicsNameUserAndDevice() throws {
        let filter = try TopicFilter("owntracks/+/+")
        #expect(filter.device(in: "owntracks/alice/phone") == "alice/phone")
        #expect(filter.device(in: "owntracks/alice/phone/event") == nil)
        #expect(filter.device(in: "owntracks/alice") == nil)
        #expect(filter.device(in: "other/alice/phone") == nil)
    }

    @Test func aMultiLevelWildcardTakesTheRest() throws {
        let filter = try TopicFilter("geotify/location/#")
        #expect(filter.device(in: "geotify/location/van/7") == "van/7")
        #expect(filter.device(in: "geotify/location/esp32") == "esp32")
        #expect(filter.device(in: "geotify/location") == nil)
        #expect(filter.device(in: "geotify/locations/x") == nil)
    }

    @Test func wildcardsAnywhereAreJoined() throws {
        #expect(try TopicFilter("fleet/+/gps/#").device(in: "fleet/north/gps/van/7") == "north/van/7")
    }

    @Test(arguments: ["owntracks/alice", "a/#/b", "a/b+", "a/#x"])
    func invalidFiltersAreRefused(filter: String) {
        #expect(throws: InputError.self) { try TopicFilter(filter) }
    }
}

@Suite("Topic filter byte matching")
struct TopicFilterByteMatchingTests {
    /// The one-pass byte matcher agrees with matching the split levels, on every topic
    /// made of a few levels drawn from names, empty levels and the filters' own words.
    @Test func theByteMatcherAgreesWithTheLevelMatcher() throws {
        let filters = try ["owntracks/+/+", "geotify/location/#", "geotify/cmd/#", "+/x", "#", "a/+/+/b", "a/+/b/+"].map(TopicFilter.init)
        let words = ["owntracks", "geotify", "location", "cmd", "alice", "phone", "a", "b", "x", "", "ü"]
        var random = SplitMix64(seed: 7)
        for _ in 0..<20_000 {
            let count = Int(random.next() % 5) + 1
            let topic = (0..<count).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: "/")
            let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
            for filter in filters {
                #expect(filter.device(inTopic: topic) == filter.device(inLevels: levels), "\(filter) on \"\(topic)\"")
            }
        }
    }
}
