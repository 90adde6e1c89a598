import Foundation
import GeotifyBridge
import GeotifyHTTP
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

    /// A byte order mark (U+FEFF, the one invisible formatting character whose UTF-8
    /// starts 0xEF) is escaped when it is the only one in the text: the quick scan that
    /// finds text needing escapes decodes after 0xEF as after 0xE2.
    @Test func aByteOrderMarkAloneIsEscaped() {
        #expect(Logger.escaped("home\u{FEFF}") == #"home\uFEFF"#)
        #expect(Logger.escaped("\u{FEFF}alice/phone") == #"\uFEFFalice/phone"#)
    }

    /// The HTTP server's log lines keep their level: a warning (a client refused) is
    /// logged at warning, so a bridge logging warnings and above still shows it.
    @Test func theHTTPServersLevelsAreKept() {
        #expect(Logger.Level(HTTPServer.LogLevel.debug) == .debug)
        #expect(Logger.Level(HTTPServer.LogLevel.info) == .info)
        #expect(Logger.Level(HTTPServer.LogLevel.warning) == .warning)
        #expect(Logger.Level(HTTPServer.LogLevel.error) == .error)
    }

    /// A line starts with the time it was written, in UTC, as ISO 8601 to the millisecond
    /// (the month counted from 1, as a reader expects), then the level padded to seven
    /// characters: the stamp lies between the clock read just before and just after.
    @Test func aLineStartsWithTheTimeItWasWritten() throws {
        let lines = Mutex<[String]>([])
        let logger = Logger(level: .info, sink: { line in lines.withLock { $0.append(line) } })
        let before = Date()
        logger.info("alice/phone entered home")
        let after = Date()
        let line = try #require(lines.withLock { $0.first })
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let stamp = try #require(formatter.date(from: String(line.prefix(24))), "\(line)")
        #expect(line.dropFirst(24) == " info    alice/phone entered home")
        #expect(stamp >= before.addingTimeInterval(-0.001) && stamp <= after, "\(line) is not between \(before) and \(after)")
    }
}
