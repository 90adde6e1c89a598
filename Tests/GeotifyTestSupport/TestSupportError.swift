/// A failure of test infrastructure (a broker that would not start, a client that did not
/// connect in time), with what went wrong and any log that explains it.
public struct TestSupportError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public var message: String

    /// Creates an error with a message.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
