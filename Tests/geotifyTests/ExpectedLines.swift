import Foundation

/// The lines a README example says a terminal shows, matched against what it showed.
///
/// A line matches exactly, except for these placeholders, which stand for what differs
/// from run to run:
///
/// | placeholder | matches |
/// |---|---|
/// | `<time>` | a UTC time as the log writes it, `2026-11-30T14:45:47.227Z` (fraction optional) |
/// | `<tst>` | Unix seconds, `1796052749` |
/// | `<pid>` | a process id |
/// | `<n>` | a whole number that depends on the machine or the build |
/// | `<lanes>` | the number of lanes (cores) with its noun: `2 lanes`, or `1 lane` on one core |
/// | `<token>` | a preview token, hexadecimal |
///
/// and a line that is only `...`, which stands for any number of lines (the build's own
/// output, which depends on what was built before).
struct ExpectedLines {
    /// How the lines seen so far compare with the expected ones.
    enum Comparison: Equatable {
        /// They match, using the first `count` lines seen.
        case matched(count: Int)
        /// The lines seen so far agree, but more are needed.
        case incomplete
        /// A line seen differs from the one expected at `index` (of the expected lines).
        case differs(index: Int)
    }

    let lines: [String]
    private let patterns: [Regex<Substring>?]

    static let placeholders: [(String, String)] = [
        ("<time>", #"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z"#),
        ("<tst>", #"\d+"#),
        ("<pid>", #"\d+"#),
        ("<n>", #"\d+"#),
        ("<lanes>", #"(?:1 lane|(?!1 )\d+ lanes)"#),
        ("<token>", #"[0-9a-f]+"#),
    ]

    init(_ lines: [String]) {
        self.lines = lines
        patterns = lines.map { line in
            guard line != "...", Self.placeholders.contains(where: { line.contains($0.0) }) else { return nil }
            var pattern = ""
            var rest = Substring(line)
            while !rest.isEmpty {
                if let (name, expression) = Self.placeholders.first(where: { rest.hasPrefix($0.0) }) {
                    pattern += expression
                    rest = rest.dropFirst(name.count)
                } else {
                    let character = rest.removeFirst()
                    pattern += Self.metacharacters.contains(character) ? "\\\(character)" : String(character)
                }
            }
            // Escaped text and the placeholders' fixed expressions: always a valid pattern.
            return try? Regex<Substring>(pattern)
        }
    }

    private static let metacharacters: Set<Character> = ["\\", "^", "$", ".", "|", "?", "*", "+", "(", ")", "[", "]", "{", "}"]

    /// Whether `actual` is what expected line `index` says.
    func matches(_ actual: String, at index: Int) -> Bool {
        if let pattern = patterns[index] {
            return actual.wholeMatch(of: pattern) != nil
        }
        return actual == lines[index]
    }

    /// Compares the lines a terminal showed so far (complete lines only) with these.
    func compare(_ seen: [String]) -> Comparison {
        compare(seen, from: 0, 0)
    }

    private func compare(_ seen: [String], from expected: Int, _ actual: Int) -> Comparison {
        var expected = expected
        var actual = actual
        while expected < lines.count {
            if lines[expected] == "..." {
                // Any number of lines, then the rest: the first place the rest matches.
                // Until it does, more lines may still come.
                for start in actual...seen.count {
                    if case .matched(let count) = compare(seen, from: expected + 1, start) { return .matched(count: count) }
                }
                return .incomplete
            }
            guard actual < seen.count else { return .incomplete }
            guard matches(seen[actual], at: expected) else { return .differs(index: expected) }
            expected += 1
            actual += 1
        }
        return .matched(count: actual)
    }
}
