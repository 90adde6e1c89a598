/// Why the web console's settings (the `http` object) or its users file cannot be used:
/// a message naming the key or line and the reason, refused before anything listens.
package struct HTTPSettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
