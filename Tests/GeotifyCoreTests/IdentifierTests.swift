import Foundation
import GeotifyCore
import GeotifyTestSupport
import Testing

/// Identifiers become topic levels and log lines: control characters, non-characters and
/// what invalid UTF-8 leaves behind are refused, named but never echoed.
@Suite("Identifiers")
struct IdentifierTests {
    /// Text of one scalar that a string literal may not spell (a non-character).
    static func scalar(_ value: UInt32) -> String { String(Character(Unicode.Scalar(value) ?? "?")) }

    /// A bidirectional override in a device made a log line show "alice's phone" for
    /// `mallory/\u{202E}enohp s'ecila`; a zero-width space made a fence `home\u{200B}`
    /// that looks like `home`. Refused in both, named but never echoed; the joiners some
    /// scripts and emoji need are kept.
    @Test(arguments: [UInt32](
        [0x200B, 0x200E, 0x200F, 0xFEFF] + Array(0x202A...0x202E) + Array(0x2060...0x2064) + Array(0x2066...0x2069)))
    func invisibleFormattingCharactersAreRefused(value: UInt32) throws {
        let text = "ab" + IdentifierTests.scalar(value) + "c"
        let hex = String(value, radix: 16, uppercase: true)
        let fence = try #require(Identifier.problem(fence: text))
        #expect(fence.hasPrefix("a fence identifier must not contain invisible formatting characters"), "\(fence)")
        #expect(fence.contains("found U+\(hex) ("), "\(fence)")
        #expect(fence.hasSuffix(") at byte 2"), "\(fence)")
        let device = try #require(Identifier.problem(device: "mallory/" + text))
        #expect(device.hasPrefix("a device identifier must not contain invisible formatting characters"), "\(device)")
        #expect(device.hasSuffix(") at byte 10"), "\(device)")
        #expect(!fence.unicodeScalars.contains { InvisibleFormatCharacter.isInvisible($0) })
    }

    @Test func theJoinersScriptsAndEmojiNeedAreKept() {
        for text in ["\u{0928}\u{094D}\u{200D}", "\u{0645}\u{200C}\u{0627}", "👨\u{200D}👩\u{200D}👧", "home\u{2019}s", "\u{2013}", "\u{FB01}"] {
            #expect(Identifier.problem(fence: text) == nil, "\(text.debugDescription)")
            #expect(Identifier.problem(device: "alice/" + text) == nil, "\(text.debugDescription)")
        }
    }

    @Test(arguments: [(String, String)]([
        ("home\nfake log line", "U+000A (a control character) at byte 4"),
        ("a\u{0}b", "U+0000 (a control character) at byte 1"),
        ("esc\u{1B}[31m", "U+001B (a control character) at byte 3"),
        ("del\u{7F}", "U+007F (a control character) at byte 3"),
        ("café\u{9B}", "U+009B (a control character) at byte 5"),
        ("x" + IdentifierTests.scalar(0xFDD0), "U+FDD0 (a Unicode non-character) at byte 1"),
        ("x" + IdentifierTests.scalar(0xFDEF), "U+FDEF (a Unicode non-character) at byte 1"),
        ("x" + IdentifierTests.scalar(0xFFFF), "U+FFFF (a Unicode non-character) at byte 1"),
        ("x" + IdentifierTests.scalar(0x10FFFE), "U+10FFFE (a Unicode non-character) at byte 1"),
        (String(decoding: [0x68, 0xFF, 0x6F], as: UTF8.self), "U+FFFD (the replacement character, left by invalid UTF-8) at byte 1"),
    ]))
    func controlCharactersNonCharactersAndInvalidUTF8AreRefused(text: String, found: String) throws {
        let fence = try #require(Identifier.problem(fence: text))
        #expect(fence == "a fence identifier must not contain control characters, non-characters or invalid UTF-8; found \(found)")
        let character = try #require(ForbiddenCharacter.first(in: "alice/" + text))
        #expect(character.offset == "alice/".utf8.count + (ForbiddenCharacter.first(in: text)?.offset ?? -99))
        #expect(Identifier.problem(device: "alice/" + text)
            == "a device identifier must not contain control characters, non-characters or invalid UTF-8; found \(character)")
        #expect(!fence.unicodeScalars.contains { ForbiddenCharacter.isForbidden($0) })
    }

    @Test func theOffsetCountsUTF8Bytes() {
        #expect(ForbiddenCharacter.first(in: "alice/ü\n")?.offset == 8)
        #expect(ForbiddenCharacter.first(in: "alice/ü\n")?.scalar == "\n")
    }

    @Test(arguments: ["home", "Zuhause-Büro", "東京", "😀 party", "a b", "\u{A0}nbsp", "\u{FFFC}", "\u{FDCF}", "\u{FDF0}"])
    func printableTextIsAccepted(text: String) {
        #expect(Identifier.problem(fence: text) == nil)
        #expect(Identifier.problem(device: "alice/\(text)") == nil)
        #expect(ForbiddenCharacter.first(in: text) == nil)
    }

    @Test func identifiersOfExactlyTheMaximumLengthAreAccepted() {
        // 200 bytes each: two-byte letters, ASCII, and a device path with two-byte letters.
        let fences = [String(repeating: "é", count: 100), String(repeating: "a", count: 200)]
        let devices = fences + ["alice/" + String(repeating: "ü", count: 97)]
        for text in devices { #expect(text.utf8.count == Identifier.maximumLength) }
        for fence in fences {
            #expect(Identifier.problem(fence: fence) == nil)
            #expect(Identifier.problem(fence: fence + "x") == "a fence identifier must be at most 200 bytes")
        }
        for device in devices {
            #expect(Identifier.problem(device: device) == nil)
            #expect(Identifier.problem(device: device + "x") == "a device identifier must be at most 200 bytes")
        }
    }

    /// MQTT reads a topic byte by byte, where a character of Swift's joins a combining
    /// mark to the '+', '#' or '/' before it: compared character by character, "+\u{301}"
    /// is no '+' and "a//\u{301}b" has no empty level. (Found by the lane's hostile-input
    /// test: such a device or fence made topics no broker takes, or an extra level.)
    @Test func wildcardsSlashesAndEmptyLevelsHiddenUnderACombiningMarkAreRefused() {
        for device in ["alice/+\u{301}", "alice/#\u{308}", "x+\u{301}/y"] {
            #expect(Identifier.problem(device: device)?.contains("must not contain '+' or '#'") == true, "\(device.debugDescription)")
        }
        for device in ["alice//\u{301}b", "alice/\u{301}/", "\u{301}//x"] {
            #expect(Identifier.problem(device: device)?.contains("empty topic levels") == true, "\(device.debugDescription)")
        }
        for fence in ["gym+\u{301}", "a/\u{301}b", "x#\u{308}"] {
            #expect(Identifier.problem(fence: fence)?.contains("must not contain '/', '+' or '#'") == true, "\(fence.debugDescription)")
        }
        #expect(Identifier.problem(device: "alice/\u{301}b") == nil, "a level may begin with a combining mark")
        #expect(Identifier.problem(fence: "caf\u{E9}\u{301}") == nil)
    }

    @Test func wildcardsAndEmptyLevelsAreStillRefused() {
        #expect(Identifier.problem(fence: "a/b") == #"the fence identifier "a/b" must not contain '/', '+' or '#'"#)
        #expect(Identifier.problem(device: "alice/+") == #"the device identifier "alice/+" must not contain '+' or '#'"#)
        #expect(Identifier.problem(device: "alice//phone")?.contains("empty topic levels") == true)
        #expect(Identifier.problem(device: "") == "a device identifier must not be empty")
    }

    /// Canonically equivalent names are equal strings in Swift and different topics to
    /// the broker: a device identifier must be composed (form C), so equal is equal bytes.
    @Test func aDeviceIdentifierMustBeInNormalizationFormC() {
        #expect(Identifier.problem(device: "zo\u{EB}/watch") == nil)
        #expect(Identifier.problem(device: "\u{C5}ngstr\u{F6}m/x") == nil)
        for device in ["zoe\u{308}/watch", "A\u{30A}ngstrom/x", "\u{212B}/x", "alice/cafe\u{301}", "e\u{301}/phone"] {
            #expect(
                Identifier.problem(device: device)?.contains("must be in Unicode normalization form C") == true, "\(device.debugDescription)")
        }
    }

    /// The same for fence identifiers (and group names, read by the same rule): each
    /// names a presence topic and a Home Assistant entity, so "cafe\u{301}" and
    /// "caf\u{E9}", one fence to Swift, were two topics to the broker.
    @Test func aFenceIdentifierMustBeInNormalizationFormC() {
        #expect(Identifier.problem(fence: "caf\u{E9}") == nil)
        #expect(Identifier.problem(fence: "\u{C5}ngstr\u{F6}m") == nil)
        for fence in ["cafe\u{301}", "A\u{30A}ngstrom", "\u{212B}", "\u{212A}elvin", "e\u{301}"] {
            #expect(
                Identifier.problem(fence: fence)?.contains("must be in Unicode normalization form C") == true, "\(fence.debugDescription)")
        }
    }

    /// The quick answer for text whose scalars are all below U+0300 agrees with
    /// normalizing it, on random text drawn from both sides of that bound: Latin-1 and
    /// Latin Extended letters, the spacing modifiers just below it, combining marks,
    /// Hangul jamo and syllables, the Angstrom and Ohm signs, and CJK.
    @Test func theQuickAnswerForNormalizationFormCAgreesWithNormalizing() {
        let scalars: [UInt32] = [0x61, 0x65, 0x41, 0xC5, 0xE9, 0xEB, 0xFF, 0x100, 0x17F, 0x1C4, 0x24F, 0x2B0, 0x2FF, 0x300, 0x301, 0x308,
                                 0x30A, 0x327, 0x340, 0x344, 0x374, 0x37E, 0x387, 0x1100, 0x1161, 0x11A8, 0xAC00, 0x212B, 0x2126, 0x4E2D]
        var random = SplitMix64(seed: 11)
        var quick = 0
        for _ in 0..<5_000 {
            let text = String(String.UnicodeScalarView((0..<(1 + random.next() % 8)).map { _ in
                Unicode.Scalar(scalars[Int(random.next() % UInt64(scalars.count))])!
            }))
            if text.utf8.allSatisfy({ $0 < 0xCC }) { quick += 1 }
            #expect(Identifier.isComposed(text) == text.precomposedStringWithCanonicalMapping.utf8.elementsEqual(text.utf8), "\(text.debugDescription)")
        }
        #expect(quick > 300, "the quick path is taken often enough to be tested: \(quick)")
    }
}

