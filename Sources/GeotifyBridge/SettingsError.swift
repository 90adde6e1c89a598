/// A settings file or flag that cannot be used, with the file, key and reason.
public struct SettingsError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
