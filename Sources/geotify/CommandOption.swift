import GeotifyCore

/// One option a command takes: `--name VALUE`, or the switch `--name` when it has no
/// placeholder. A command's options are its whole vocabulary: its parser accepts only
/// them, its help lists only them, and a misspelt option is answered with the nearest.
struct CommandOption: Equatable {
    /// The option without its leading `--`.
    let name: String
    /// What the value is (`FILE`, `URL`); nil for a switch.
    let placeholder: String?
    /// What the option does, for the help.
    let help: String

    /// Whether the option takes a value.
    var takesValue: Bool { placeholder != nil }

    /// `--name PLACEHOLDER` or `--name`.
    var synopsis: String { "--\(name)" + (placeholder.map { " \($0)" } ?? "") }

    /// The help lines for `options`: synopses in one column, their help beside them,
    /// wrapped to fit 80 columns.
    static func help(_ options: [CommandOption]) -> String {
        let width = (options.map(\.synopsis.count).max() ?? 0) + 4
        return options.map { option in
            let lines = wrap(option.help, width: 80 - width)
            let first = "  " + option.synopsis.padding(toLength: width - 2, withPad: " ", startingAt: 0) + (lines.first ?? "")
            return ([first] + lines.dropFirst().map { String(repeating: " ", count: width) + $0 }).joined(separator: "\n")
        }
        .joined(separator: "\n")
    }

    /// `text` broken into lines of at most `width` characters, at spaces.
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
