import GeotifyCore
import Testing

/// Levels as the broker cuts them, at every '/' byte, and the wildcards' rules read on
/// those bytes: a combining mark after '/', '+' or '#' hides none of them.
@Suite("Topic levels")
struct TopicLevelsTests {
    @Test func levelsAreCutAtEverySlashByte() {
        let cut = { (text: String) in TopicLevels.split(text).map { String(Substring($0)) } }
        #expect(cut("owntracks/alice/phone") == ["owntracks", "alice", "phone"])
        #expect(cut("a//b") == ["a", "", "b"])
        #expect(cut("a/") == ["a", ""])
        #expect(cut("a/\u{301}b") == ["a", "\u{301}b"], "'/' and the mark after it are one character, two levels")
        #expect(TopicLevels.joined(TopicLevels.split("a/\u{301}b//c")) == "a/\u{301}b//c")
        #expect(TopicLevels.first(of: "alice/phone") == "alice")
        #expect(TopicLevels.first(of: "alice") == "alice")
        #expect(TopicLevels.first(of: "mallory/\u{301}1") == "mallory")
        #expect(TopicLevels.first(of: "x\u{600}/y") == "x\u{600}", "a prepended mark joins the '/' into one character")
    }

    @Test func wildcardsAreWholeLevelsAndHashComesLast() {
        let misuse = { (filter: String) in TopicLevels.wildcardMisuse(in: TopicLevels.split(filter)) }
        for filter in ["owntracks/+/+", "geotify/location/#", "#", "+", "a/+/b/#"] { #expect(misuse(filter) == nil, "\(filter)") }
        for filter in ["a/#/b", "a/b#", "a/#\u{308}", "#\u{308}"] { #expect(misuse(filter) == .hashNotWholeLastLevel, "\(filter.debugDescription)") }
        for filter in ["a/b+", "a/+\u{301}/b", "+x"] { #expect(misuse(filter) == .plusNotWholeLevel, "\(filter.debugDescription)") }
    }
}
