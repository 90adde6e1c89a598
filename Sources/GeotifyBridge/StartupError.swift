/// Why the bridge could not start: an invalid fence file (every problem listed), an
/// unusable state directory, or MQTT options the client refused.
public struct StartupError: Error, Sendable, CustomStringConvertible {
    public var lines: [String]

    public init(_ lines: [String]) {
        self.lines = lines
    }

    public var description: String { lines.joined(separator: "\n") }
}
