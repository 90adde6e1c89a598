/// Why the bridge could not start: an invalid fence file (every problem listed), an
/// unusable state directory, or MQTT options the client refused.
package struct StartupError: Error, Sendable, CustomStringConvertible {
    package var lines: [String]

    package init(_ lines: [String]) {
        self.lines = lines
    }

    package var description: String { lines.joined(separator: "\n") }
}
