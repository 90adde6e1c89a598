import GeotifyCore

/// The words after a subcommand, split into options with values (`--fences FILE` or
/// `--fences=FILE`), switches (`--json`) and positional arguments, checked against
/// the options the subcommand declares, so a typo gets a clear error (with the option
/// it most likely meant) instead of being ignored.
struct Arguments {
    private(set) var positionals: [String] = []
    private var values: [String: String] = [:]
    private var switches: Set<String> = []
    /// The subcommand the words are for, named by usage errors.
    private let command: String

    /// Parses `words` for a subcommand that takes `options`.
    init(_ words: [String], command: String, options: [CommandOption]) throws(UsageError) {
        self.command = command
        var index = 0
        while index < words.count {
            let word = words[index]
            index += 1
            guard word.hasPrefix("--"), word.count > 2 else {
                positionals.append(word)
                continue
            }
            var name = String(word.dropFirst(2))
            var inlineValue: String?
            if let equals = name.firstIndex(of: "=") {
                inlineValue = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard let option = options.first(where: { $0.name == name }) else {
                let hint = NameSuggestion.hint(for: name, in: options.map(\.name)) { "--\($0)" }
                throw UsageError("unknown option --\(name)\(hint)", command: command)
            }
            if !option.takesValue {
                guard inlineValue == nil else { throw UsageError("--\(name) takes no value", command: command) }
                switches.insert(name)
            } else if let inlineValue {
                values[name] = inlineValue
            } else {
                guard index < words.count else { throw UsageError("--\(name) needs a value", command: command) }
                values[name] = words[index]
                index += 1
            }
        }
    }

    /// The value given for `--name`, if any.
    func value(_ name: String) -> String? { values[name] }

    /// The value given for `--name` as a number, if any; a value that is not a finite
    /// decimal number is a usage error naming the option.
    func number(_ name: String) throws(UsageError) -> Double? {
        guard let text = values[name] else { return nil }
        guard let number = Double(text), number.isFinite, !text.contains(where: { $0 == "x" || $0 == "X" }) else {
            throw UsageError("--\(name) must be a number, not \"\(text)\"", command: command)
        }
        return number
    }

    /// Whether the switch `--name` was given.
    func isSet(_ name: String) -> Bool { switches.contains(name) }

    /// Throws unless there are no positional arguments.
    func expectNoPositionals() throws(UsageError) {
        if let first = positionals.first {
            throw UsageError("unexpected argument \"\(first)\"", command: command)
        }
    }
}
