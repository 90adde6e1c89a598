/// Why a text is not acceptable JSON, and where: a 1-based line and column.
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    public var line: Int
    public var column: Int
    public var reason: String
    /// The name an object gave twice, when that is the problem (a parser
    /// `rejectingDuplicateMembers`); nil for every other error.
    public var duplicateMember: String?

    public init(line: Int, column: Int, reason: String, duplicateMember: String? = nil) {
        self.line = line
        self.column = column
        self.reason = reason
        self.duplicateMember = duplicateMember
    }

    public var description: String { "line \(line), column \(column): \(reason)" }
}
