import GeotifyBridge
import Synchronization
import Testing

/// Log lines are one line of printable text whatever they quote.
@Suite("Logger")
struct LoggerTests {
    @Test func controlCharactersInAMessageAreEscapedSoNoLineCanBeForged() {
        let lines = Mutex<[String]>([])
        let logger = Logger(level: .info, sink: { line in lines.withLock { $0.append(line) } })
        logger.warning("refused \"home\n2026-01-01T00:00:00.000Z info    forged\" with \u{0}NUL, \u{1B}[2J, \u{7F}, \u{9B}, tab\t")
        let logged = lines.withLock { $0 }
        #expect(logged.count == 1)
        #expect(logged.first?.hasSuffix(#"refused "home\u000A2026-01-01T00:00:00.000Z info    forged" with \u0000NUL, \u001B[2J, \u007F, \u009B, tab\u0009"#) == true)
        #expect(logged.first?.utf8.contains { $0 < 0x20 || $0 == 0x7F } == false)
    }

    @Test func printableTextIsLeftAsItIs() {
        let text = "Zuhause ¢ ü 東京 😀 \u{A0} \u{100} \\u0041"
        #expect(Logger.escaped(text) == text)
    }

    @Test func everyControlCharacterIsEscaped() {
        let controls = (0..<0x20).map { Unicode.Scalar(UInt8($0)) } + (0x7F...0x9F).compactMap { Unicode.Scalar($0) }
        for scalar in controls {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            #expect(Logger.escaped("a\(Character(scalar))b") == "a\\u00\(hex.count == 1 ? "0" : "")\(hex)b")
        }
    }

    /// A bidirectional override quoted in a line (a hostile device's topic, a note)
    /// turned the rest of the line around on a terminal; it and the other invisible
    /// formatting characters are written escaped, the joiners and other text as they are.
    @Test func invisibleFormattingCharactersAreEscaped() {
        #expect(Logger.escaped("refused owntracks/mallory/\u{202E}enohp s'ecila: no") == #"refused owntracks/mallory/\u202Eenohp s'ecila: no"#)
        #expect(Logger.escaped("home\u{200B} \u{FEFF}x \u{2066}y\u{2069} \u{200F}") == #"home\u200B \uFEFFx \u2066y\u2069 \u200F"#)
        let kept = "\u{2013} \u{201C}quoted\u{201D} \u{200D}\u{200C} \u{FB01} \u{FF21} \u{2122}"
        #expect(Logger.escaped(kept) == kept)
        #expect(Logger.escaped("\u{202E}\n") == #"\u202E\u000A"#)
    }
}
