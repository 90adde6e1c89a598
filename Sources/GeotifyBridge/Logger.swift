import Foundation
import GeotifyHTTP
import Synchronization

/// Human-readable log lines on standard error: `2026-11-29T18:26:13.123Z warning message`.
///
/// The sink is injectable so tests can read what was logged; lines from different
/// threads never interleave.
public final class Logger: Sendable {
    /// How much to log; each level includes the ones above it.
    public enum Level: Int, Sendable, Comparable, CaseIterable {
        case debug, info, warning, error

        /// The level named `name` (`debug`, `info`, `warning`, `error`).
        public init?(name: String) {
            guard let level = Level.allCases.first(where: { "\($0)" == name }) else { return nil }
            self = level
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

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

    public let level: Level
    private let sink: Mutex<@Sendable (String) -> Void>

    /// A logger that writes lines of `level` and above to `sink` (standard error by default).
    public init(level: Level = .info, sink: @escaping @Sendable (String) -> Void = Logger.standardError) {
        self.level = level
        self.sink = Mutex(sink)
    }

    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }

    /// Writes one line at `level`, if that level is enabled.
    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= self.level else { return }
        let line = "\(Logger.timestamp()) \(String(describing: level).padding(toLength: 7, withPad: " ", startingAt: 0)) \(message())"
        sink.withLock { $0(line) }
    }

    /// Writes a line to standard error. A failed write (a full disk under a redirected
    /// log) loses the line but never stops the bridge, unlike `FileHandle.write`, which
    /// traps on failure.
    public static let standardError: @Sendable (String) -> Void = { line in
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
