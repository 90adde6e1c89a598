import GeotifyCore
import GeotifyJSON

/// One member of a JSON object read as the type its key needs, or a `FenceIssue` that
/// names the key and says what was wrong. The fence codec, the transition rules and the
/// settings file all read their values with it, so a wrong value gets the same words
/// and the same code wherever it is written.
package enum JSONField {
    /// A string.
    package static func string(_ value: JSON, key: String) throws(FenceIssue) -> String {
        guard case .string(let text) = value else { throw wrongType(value, key: key, expected: "a string") }
        return text
    }

    /// `true` or `false`.
    package static func bool(_ value: JSON, key: String) throws(FenceIssue) -> Bool {
        guard case .bool(let flag) = value else { throw wrongType(value, key: key, expected: "true or false") }
        return flag
    }

    /// A number within `range`; `Double.greatestFiniteMagnitude` as the upper bound
    /// means none.
    package static func number(_ value: JSON, key: String, range: ClosedRange<Double>) throws(FenceIssue) -> Double {
        guard case .number(let number) = value else { throw wrongType(value, key: key, expected: "a number") }
        guard range.contains(number) else {
            let text = "\(key) \(JSONWriter.text(of: number))"
            let lower = JSONWriter.text(of: range.lowerBound)
            if range.upperBound < .greatestFiniteMagnitude {
                throw FenceIssue(.outOfRange, "\(text) is outside \(lower)...\(JSONWriter.text(of: range.upperBound))")
            }
            throw FenceIssue(.outOfRange, range.lowerBound == 0 ? "\(text) must not be negative" : "\(text) must be at least \(lower)")
        }
        return number
    }

    /// A whole number within `range`, and of fewer than 16 digits (`Int` takes any
    /// such `Double` exactly), so that a range without an upper bound still has one.
    package static func wholeNumber(_ value: JSON, key: String, range: ClosedRange<Int>) throws(FenceIssue) -> Int {
        let upper = range.upperBound == .max ? Double.greatestFiniteMagnitude : Double(range.upperBound)
        let number = try number(value, key: key, range: Double(range.lowerBound)...upper)
        guard number == number.rounded() else {
            throw FenceIssue(.invalidValue, "\"\(key)\" must be a whole number, not \(JSONWriter.text(of: number))")
        }
        guard abs(number) <= largestWholeNumber else {
            let bound = number < 0 ? "at least -\(Int(largestWholeNumber))" : "at most \(Int(largestWholeNumber))"
            throw FenceIssue(.outOfRange, "\(key) \(JSONWriter.text(of: number)) must be \(bound)")
        }
        return Int(number)
    }

    /// The largest magnitude `wholeNumber` takes: 15 nines.
    static let largestWholeNumber = 999_999_999_999_999.0

    /// The value of the one of `choices` that `value` names, with the nearest name
    /// suggested when it names none of them.
    package static func choice<Value>(_ value: JSON, key: String, among choices: [(name: String, value: Value)]) throws(FenceIssue) -> Value {
        let text = try string(value, key: key)
        guard let chosen = choices.first(where: { $0.name == text }) else {
            let names = choices.map(\.name)
            let hint = NameSuggestion.hint(for: text, in: names)
            throw FenceIssue(.invalidValue, "\"\(key)\" must be one of \(names.joined(separator: ", ")), not \(JSONWriter().string(value))\(hint)")
        }
        return chosen.value
    }

    /// An array of strings.
    package static func strings(_ value: JSON, key: String) throws(FenceIssue) -> [String] {
        guard case .array(let elements) = value else { throw wrongType(value, key: key, expected: "an array of strings") }
        var texts: [String] = []
        for element in elements {
            guard case .string(let text) = element else {
                throw FenceIssue(.wrongType, "\"\(key)\" must be an array of strings, but holds \(element.kindDescription)")
            }
            texts.append(text)
        }
        return texts
    }

    private static func wrongType(_ value: JSON, key: String, expected: String) -> FenceIssue {
        FenceIssue(.wrongType, "\"\(key)\" must be \(expected), not \(value.kindDescription)")
    }
}
