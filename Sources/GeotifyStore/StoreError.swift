import GeotifyCore

/// A failure of the state database or a file write, with what was being done and why.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    /// What was being attempted ("open /var/lib/geotify/state.sqlite", "save state").
    public var operation: String
    /// The reason, as the system or SQLite gave it.
    public var reason: String
    /// The file that could not be read, when that is what failed: in a fence directory,
    /// which of its files.
    public var file: String?
    /// The code of a refusal that is not a failure of the system (a fence file that
    /// would be larger than `maximumFenceFileBytes`: `fenceLimit`; one that changed since
    /// it was read: `stale`); nil for a failure (`io` when reported to a command).
    public var code: ErrorCode?

    public init(_ operation: String, _ reason: String, file: String? = nil, code: ErrorCode? = nil) {
        self.operation = operation
        self.reason = reason
        self.file = file
        self.code = code
    }

    public var description: String { "\(operation): \(reason)" }
}
