/// A JSON object: its members in the order they were written, and the line it started on.
///
/// Objects in Geotify's inputs are small (a location payload, a fence, a command), so a
/// list searched from the end is both faster to build than a dictionary and keeps what
/// people wrote in order. Duplicate keys are kept; lookups see the last one, as most
/// JSON readers do, and `duplicateKeys` lets a validator refuse them.
public struct JSONObject: Sendable, Equatable {
    /// One `"key": value` pair.
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSON

        public init(key: String, value: JSON) {
            self.key = key
            self.value = value
        }
    }

    /// The members in written order.
    public var members: [Member]
    /// The 1-based line of the opening brace in the parsed text; 0 when built in code.
    public var line: Int

    public init(_ members: [Member] = [], line: Int = 0) {
        self.members = members
        self.line = line
    }

    /// The value of the last member named `key`.
    public subscript(key: String) -> JSON? {
        get {
            var index = members.count
            while index > 0 {
                index -= 1
                if members[index].key == key { return members[index].value }
            }
            return nil
        }
        set {
            members.removeAll { $0.key == key }
            if let newValue { members.append(Member(key: key, value: newValue)) }
        }
    }

    /// The keys, in written order.
    public var keys: [String] { members.map(\.key) }

    /// Keys that occur more than once, in the order of their second occurrence.
    public var duplicateKeys: [String] {
        var seen = Set<String>()
        var duplicates: [String] = []
        for member in members where !seen.insert(member.key).inserted {
            duplicates.append(member.key)
        }
        return duplicates
    }

    /// Equality ignores the source line: two objects are equal when their members are.
    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members == rhs.members
    }
}
