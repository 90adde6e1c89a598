import Testing
import GeotifyBridge

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
