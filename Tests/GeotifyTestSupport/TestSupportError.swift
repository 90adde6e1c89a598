/// A failure of test infrastructure (a broker that would not start, a client that did not
/// connect in time), with what went wrong and any log that explains it.
package struct TestSupportError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    package var message: String

    /// Creates an error with a message.
    package init(_ message: String) {
        self.message = message
    }

    /// The message.
    package var description: String { message }
}
