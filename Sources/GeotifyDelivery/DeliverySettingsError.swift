/// A `notify` setting that cannot be used: the file, where in it, and why, so a wrong
/// target is refused at startup with the reason instead of failing at the first delivery.
package struct DeliverySettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) {
        self.message = message
    }

    package var description: String { message }
}
