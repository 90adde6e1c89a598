/// The known name a misspelt one most likely meant, for the "did you mean" of errors
/// about unknown commands, options, settings keys and event types (`fence` for
/// `fences`, `onEnter` for `onEntry`, `statsIntervall` for `statsInterval`), so an
/// error names the one fix instead of listing every name there is.
///
/// Names are compared by edit distance (insertions, deletions, substitutions and
/// swaps of neighbours), ignoring letter case. A name is suggested when it is at most
/// a third of the word's length away (at least one edit), or when it is the only name
/// that starts with the word. Words shorter than three characters get no suggestion
/// (every short name is near them); words longer than `maximumLength` are never
/// compared, so hostile input costs nothing.
package enum NameSuggestion {
    /// Longer words get no suggestion.
    package static let maximumLength = 64

    /// The name in `names` closest to `word`, or nil when none is close enough or
    /// `word` is itself one of them. Ties go to the earlier name.
    package static func nearest(to word: String, in names: some Sequence<String>) -> String? {
        let typed = Array(word.lowercased().unicodeScalars)
        guard typed.count >= 3, typed.count <= maximumLength else { return nil }
        let limit = max(1, typed.count / 3)
        var best: (name: String, distance: Int)?
        var prefixed: [String] = []
        for name in names {
            if name == word { return nil }
            let candidate = Array(name.lowercased().unicodeScalars)
            guard candidate.count <= maximumLength else { continue }
            if candidate.starts(with: typed) { prefixed.append(name) }
            guard abs(candidate.count - typed.count) <= limit else { continue }
            let distance = editDistance(typed, candidate)
            if distance <= limit, distance < (best?.distance ?? .max) { best = (name, distance) }
        }
        if let best { return best.name }
        return prefixed.count == 1 ? prefixed[0] : nil
    }

    /// `" (did you mean X?)"` with X the nearest name written by `spell`, or "" when
    /// there is none: ready to append to an error message.
    package static func hint(for word: String, in names: some Sequence<String>, spell: (String) -> String = { "\"\($0)\"" }) -> String {
        nearest(to: word, in: names).map { " (did you mean \(spell($0))?)" } ?? ""
    }

    /// The optimal string alignment distance between `a` and `b`: the fewest single
    /// insertions, deletions, substitutions and swaps of adjacent characters that turn
    /// one into the other.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                var distance = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    distance = min(distance, beforePrevious[j - 2] + 1)
                }
                current[j] = distance
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}
