/// One reason a fence does not validate, with its category, so that a command reply
/// can say with a distinct code whether a field was missing, of the wrong type, out of
/// range, unknown, or otherwise invalid.
public struct FenceIssue: Error, Sendable, Equatable, CustomStringConvertible {
    /// The category of a problem; the raw value is the code replies carry.
    public enum Kind: String, Sendable, CaseIterable {
        case missingField = "missing_field"
        case wrongType = "wrong_type"
        case outOfRange = "out_of_range"
        case unknownKey = "unknown_key"
        case invalidValue = "invalid_value"
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
