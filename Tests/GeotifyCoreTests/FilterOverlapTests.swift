import GeotifyCore
import Testing

/// Two filters overlap when some topic matches both, read level by level as the broker
/// matches: '+' one level, '#' any number, none included.
@Suite("Filter overlap")
struct FilterOverlapTests {
    @Test(arguments: [
        ("#", "geotify/error", "geotify/error"),
        ("+/+", "geotify/error", "geotify/error"),
        ("geotify/#", "geotify/status", "geotify/status"),
        ("geotify/#", "geotify/event/+/#", "geotify/event/+/#"),
        ("#", "geotify/event/+/#", "geotify/event/+/#"),
        ("owntracks/#", "owntracks/+/+/event", "owntracks/+/+/event"),
        ("owntracks/+/+", "owntracks/+/+", "owntracks/+/+"),
        ("a/#", "a", "a"),
        ("+/b/#", "a/+/c", "a/b/c"),
        ("owntracks/+/#/event", "#", "owntracks/+/event"),
        ("owntracks/+/#/event", "owntracks/x/y/z/event", "owntracks/x/y/z/event"),
    ])
    func filtersThatShareATopicMeet(first: String, second: String, common: String) {
        #expect(FilterOverlap.common(first, second) == common)
        #expect(FilterOverlap.common(second, first) != nil, "the overlap is symmetric")
    }

    @Test(arguments: [
        ("owntracks/+/+", "owntracks/+/+/event"),
        ("owntracks/+/+", "geotify/error"),
        ("geotify/location/#", "geotify/error"),
        ("geotify/location/#", "geotify/event/+/#"),
        ("+/+", "geotify/event/+/#"),
        ("+", "geotify/error"),
        ("a/+", "a"),
        ("owntracks/+/#/event", "owntracks/+/event/x"),
        ("caf\u{E9}/+", "cafe\u{301}/x"),
    ])
    func filtersWithNoTopicInCommonDoNot(first: String, second: String) {
        #expect(FilterOverlap.common(first, second) == nil)
        #expect(FilterOverlap.common(second, first) == nil)
    }

    /// Many '#' levels cost the product of the levels, not an exponential search.
    @Test func manyHashLevelsStayCheap() {
        let many = Array(repeating: "#", count: 40).joined(separator: "/")
        let other = Array(repeating: "+", count: 60).joined(separator: "/") + "/x"
        #expect(FilterOverlap.common(many + "/y", other) == nil)
    }
}
