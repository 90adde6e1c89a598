/// Whether two MQTT topic filters can match the same topic, and a filter for such
/// topics: what tells that a subscription would receive what the bridge publishes.
///
/// Levels are compared as the broker compares them (`TopicLevels`): a literal matches
/// itself byte for byte, `+` any one level, `#` any number of levels, none included (as
/// `a/#` matches `a`). Unlike in a subscription, `#` may stand anywhere here, so that a
/// family of published topics such as `owntracks/+/#/event` can be written as a filter.
package enum FilterOverlap {
    /// A filter matching only topics both `first` and `second` match (the more specific
    /// level of the two at each place: `geotify/error` for `#` and `geotify/error`), nil
    /// when no topic matches both.
    package static func common(_ first: String, _ second: String) -> String? {
        let a = TopicLevels.split(first).map(Level.init)
        let b = TopicLevels.split(second).map(Level.init)
        var memo = [Bool?](repeating: nil, count: (a.count + 1) * (b.count + 1))
        var levels: [String] = []
        guard meet(a, 0, b, 0, &memo, &levels) else { return nil }
        return levels.joined(separator: "/")
    }

    /// One level of a filter.
    private enum Level: Equatable {
        case literal(Substring.UTF8View)
        case plus
        case hash

        init(_ level: Substring.UTF8View) {
            self = TopicLevels.isPlus(level) ? .plus : TopicLevels.isHash(level) ? .hash : .literal(level)
        }

        static func == (left: Level, right: Level) -> Bool {
            switch (left, right) {
            case (.plus, .plus), (.hash, .hash): true
            case (.literal(let l), .literal(let r)): l.elementsEqual(r)
            default: false
            }
        }

        var text: String {
            switch self {
            case .plus: "+"
            case .hash: "#"
            case .literal(let bytes): String(decoding: bytes, as: UTF8.self)
            }
        }
    }

    /// Whether `a[i...]` and `b[j...]` match a common topic, appending its levels to
    /// `levels` when they do. Each pair of places is tried once (`memo`), so this takes
    /// at most the product of the filters' levels.
    private static func meet(
        _ a: [Level], _ i: Int, _ b: [Level], _ j: Int, _ memo: inout [Bool?], _ levels: inout [String]
    ) -> Bool {
        let slot = i * (b.count + 1) + j
        if memo[slot] == false { return false }
        let mark = levels.count
        let met = tryMeet(a, i, b, j, &memo, &levels)
        if !met {
            levels.removeSubrange(mark...)
            memo[slot] = false
        }
        return met
    }

    private static func tryMeet(
        _ a: [Level], _ i: Int, _ b: [Level], _ j: Int, _ memo: inout [Bool?], _ levels: inout [String]
    ) -> Bool {
        let aDone = i == a.count, bDone = j == b.count
        if aDone && bDone { return true }
        // Two '#' ending both filters: everything below, written once.
        if i == a.count - 1, j == b.count - 1, a[i] == .hash, b[j] == .hash {
            levels.append("#")
            return true
        }
        if !aDone, a[i] == .hash {
            // The '#' takes no level, or the level b's next one takes (b's own '#' taking none).
            if meet(a, i + 1, b, j, &memo, &levels) { return true }
            if !bDone {
                if b[j] != .hash { levels.append(b[j].text) }
                if meet(a, i, b, j + 1, &memo, &levels) { return true }
            }
            return false
        }
        if !bDone, b[j] == .hash {
            if meet(a, i, b, j + 1, &memo, &levels) { return true }
            if !aDone {
                levels.append(a[i].text)
                if meet(a, i + 1, b, j, &memo, &levels) { return true }
            }
            return false
        }
        guard !aDone, !bDone else { return false }
        switch (a[i], b[j]) {
        case (.plus, let other), (let other, .plus):
            levels.append(other.text)
        case (.literal(let l), .literal(let r)):
            guard l.elementsEqual(r) else { return false }
            levels.append(a[i].text)
        default:
            return false
        }
        return meet(a, i + 1, b, j + 1, &memo, &levels)
    }
}
