import GeotifyCore

/// One reason a fence does not validate, with its code, so that a command reply can
/// say whether a field was missing, of the wrong type, out of range, unknown, or
/// otherwise invalid.
public struct FenceIssue: Error, Sendable, Equatable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
