/// A settings file or flag that cannot be used, with the file, key and reason.
package struct SettingsError: Error, Sendable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
