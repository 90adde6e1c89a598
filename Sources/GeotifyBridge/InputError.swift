import GeotifyCore

/// Why an incoming message (a position, a command) was refused: a code, which is what
/// the error counters and the `geotify/error` topic are keyed by, and a specific
/// message for the person who has to fix the sender.
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
