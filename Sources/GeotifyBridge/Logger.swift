import Foundation
import GeotifyCore
import GeotifyHTTP
import Synchronization

/// Human-readable log lines on standard error: `2026-11-29T18:26:13.123Z warning message`.
///
/// The sink is injectable so tests can read what was logged; lines from different
/// threads never interleave. Every line is one line of text: control characters in
/// what it quotes (a newline that would forge a line, a NUL or an escape sequence from a
/// hostile payload) and invisible formatting characters (a bidirectional override that
/// would turn the rest of the line around) are written as `\uXXXX`, so nothing binary
/// or misleading reaches the log.
package final class Logger: Sendable {
    /// How much to log; each level includes the ones above it.
    package enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error

        /// The level named `name` (`debug`, `info`, `warning`, `error`).
        package init?(name: String) {
            guard let level = Level.allCases.first(where: { "\($0)" == name }) else { return nil }
            self = level
        }

        package static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The level of a line the HTTP server logs.
        package init(_ level: HTTPServer.LogLevel) {
            self = switch level {
            case .debug: .debug
            case .info: .info
            case .warning: .warning
            case .error: .error
            }
        }
    }

    package let level: Level
    private let sink: Mutex<@Sendable (String) -> Void>

    /// A logger that writes lines of `level` and above to `sink` (standard error by default).
    package init(level: Level = .info, sink: @escaping @Sendable (String) -> Void = Logger.standardError) {
        self.level = level
        self.sink = Mutex(sink)
    }

    package func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    package func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    package func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    package func error(_ message: @autoclosure () -> String) { log(.error, message()) }

    /// Writes one line at `level`, if that level is enabled.
    package func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        let line = "\(Logger.timestamp()) \(String(describing: level).padding(toLength: 7, withPad: " ", startingAt: 0)) \(Logger.escaped(message()))"
        sink.withLock { $0(line) }
    }

    /// `text` with each control character (U+0000–U+001F, U+007F–U+009F) and each
    /// invisible formatting character (`InvisibleFormatCharacter`: a bidirectional
    /// override would show the rest of the line reversed, "alice's phone" for a hostile
    /// device's topic) written as `\uXXXX`; the text itself, without copying, when it has
    /// none (the common case costs one pass over its bytes).
    package static func escaped(_ text: String) -> String {
        var utf8 = text.utf8.makeIterator()
        var (first, previous): (UInt8, UInt8) = (0, 0)
        var clean = true
        while let byte = utf8.next() {
            // Every invisible formatting character is three bytes starting 0xE2 or 0xEF:
            // decoded only there, so a dash or a quotation mark (0xE2 0x80 ...) costs no
            // second pass.
            if byte < 0x20 || byte == 0x7F || (previous == 0xC2 && byte <= 0x9F)
                || ((first == 0xE2 || first == 0xEF) && byte & 0xC0 == 0x80 && previous & 0xC0 == 0x80
                    && Unicode.Scalar(UInt32(first & 0x0F) << 12 | UInt32(previous & 0x3F) << 6 | UInt32(byte & 0x3F))
                        .map(InvisibleFormatCharacter.isInvisible) == true) {
                clean = false
                break
            }
            (first, previous) = (previous, byte)
        }
        if clean { return text }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        let hex = Array("0123456789ABCDEF")
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x20 || (0x7F...0x9F).contains(value) || InvisibleFormatCharacter.isInvisible(scalar) {
                escaped += "\\u"
                for shift in stride(from: 12, through: 0, by: -4) { escaped.append(hex[Int((value >> UInt32(shift)) & 0xF)]) }
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Writes a line to standard error. A failed write (a full disk under a redirected
    /// log) loses the line but never stops the bridge, unlike `FileHandle.write`, which
    /// traps on failure.
    package static let standardError: @Sendable (String) -> Void = { line in
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = write(STDERR_FILENO, raw.baseAddress! + offset, raw.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0 && errno == EINTR {
                    continue
                } else {
                    return
                }
            }
        }
    }

    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(now.tv_nsec / 1_000_000))
    }
}
