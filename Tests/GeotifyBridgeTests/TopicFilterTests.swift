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

    @Test(arguments: ["owntracks/alice", "a/#/b", "a/b+", "a/#x", "a/#\u{308}", "a/+\u{301}/b"])
    func invalidFiltersAreRefused(filter: String) {
        #expect(throws: InputError.self) { try TopicFilter(filter) }
    }
}

@Suite("Topic filter byte matching")
struct TopicFilterByteMatchingTests {
    /// The one-pass byte matcher agrees with matching level by level, on every topic
    /// made of a few levels drawn from names, empty levels, the filters' own words, and
    /// levels that begin with a combining mark (which a character of Swift's would join
    /// to the '/' before it) or spell a word in decomposed form.
    @Test func theByteMatcherAgreesWithTheLevelMatcher() throws {
        let filters = try ["owntracks/+/+", "geotify/location/#", "geotify/cmd/#", "+/x", "#", "a/+/+/b", "a/+/b/+", "\u{FC}/+/b/+"]
            .map(TopicFilter.init)
        let words = ["owntracks", "geotify", "location", "cmd", "alice", "phone", "a", "b", "x", "", "\u{FC}", "u\u{308}", "\u{301}x", "\u{301}"]
        var random = SplitMix64(seed: 7)
        for _ in 0..<20_000 {
            let count = Int(random.next() % 5) + 1
            let chosen = (0..<count).map { _ in words[Int(random.next() % UInt64(words.count))] }
            let topic = chosen.joined(separator: "/")
            for filter in filters {
                #expect(filter.device(inTopic: topic) == filter.device(in: topic), "\(filter) on \"\(topic)\"")
            }
        }
    }

    /// Levels as the broker cuts and compares them: at every '/' byte, and equal only
    /// byte for byte.
    @Test func levelsAreCutAndComparedByteByByte() throws {
        let spread = try TopicFilter("trackers/+/pos/+")
        #expect(spread.device(in: "trackers/\u{301}x/pos/1") == "\u{301}x/1")
        #expect(spread.device(in: "trackers/a/\u{301}/pos") == nil)
        let literal = try TopicFilter("\u{FC}ber/+/b/+")
        #expect(literal.device(in: "\u{FC}ber/x/b/y") == "x/y")
        #expect(literal.device(in: "u\u{308}ber/x/b/y") == nil, "the broker would not deliver it for this filter")
    }
}
