import Foundation

/// The command examples of a Markdown document (the README), read as terminal sessions so
/// a test can replay them and compare what they print with what the document shows.
///
/// The convention (the README's "About the examples" states it for its readers):
/// - Every command example is a ```` ```console ```` block. In it, a line `$ COMMAND` is
///   typed into the terminal (a line ending in ` \` continues on the next), a line `^C`
///   is Ctrl-C pressed there, and every other line is what the terminal shows next: the
///   command's standard output and error, or what a program still running there prints.
///   Expected lines may hold placeholders (`ExpectedLines`).
/// - A block runs in terminal 1 unless the comment line right before it says
///   `<!-- in terminal N -->`; a block of only expected lines says what that terminal
///   shows next, so one command's effect can be shown in another terminal.
/// - A block that cannot run in a test (it needs a Docker engine, systemd, the network)
///   has the comment line `<!-- not run: REASON -->` right before it; the reason is
///   required.
/// - Shell blocks (`sh`, `bash`, `shell`, ...) are refused: a command must be a checked
///   `console` example or explicitly not run.
struct ReadmeExamples {
    /// One thing done in a terminal, in document order.
    enum Step: Equatable {
        /// Type `command` into `terminal`.
        case command(terminal: Int, String)
        /// Press Ctrl-C in `terminal`.
        case interrupt(terminal: Int)
        /// `terminal` shows these lines next.
        case output(terminal: Int, [String])
    }

    /// A console block that is not run, with its first command and the reason given.
    struct Skipped: Equatable {
        let line: Int
        let command: String
        let reason: String
    }

    /// A problem with the document's examples, with its line number.
    struct Problem: Error, CustomStringConvertible, Equatable {
        let line: Int
        let message: String
        var description: String { "README.md:\(line): \(message)" }
    }

    private(set) var steps: [Step] = []
    private(set) var skipped: [Skipped] = []

    /// Reads `text`; throws the first problem found with its examples.
    init(markdown text: String) throws(Problem) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var index = 0
        while index < lines.count {
            let line = lines[index]
            guard line.hasPrefix("```") else {
                if line.hasPrefix("<!-- in terminal") || line.hasPrefix("<!-- not run") {
                    let next = index + 1 < lines.count ? lines[index + 1] : ""
                    guard next == "```console" else {
                        throw Problem(line: index + 1, message: "\(line) must be right before a ```console block")
                    }
                }
                index += 1
                continue
            }
            let language = line.dropFirst(3).trimmingCharacters(in: .whitespaces)
            guard let end = lines[(index + 1)...].firstIndex(where: { $0.hasPrefix("```") }) else {
                throw Problem(line: index + 1, message: "a code block that does not end")
            }
            if Self.shellLanguages.contains(language) {
                throw Problem(line: index + 1, message: "a ```\(language) block: write commands as a ```console block (with `$ ` lines), or mark it <!-- not run: REASON -->")
            }
            if language == "console" {
                let directive = index > 0 ? lines[index - 1] : ""
                try read(block: Array(lines[(index + 1)..<end]), firstLine: index + 2, directive: directive, fenceLine: index + 1)
            }
            index = end + 1
        }
    }

    private static let shellLanguages: Set<String> = ["sh", "bash", "shell", "zsh", "shell-session", "shellsession"]

    private mutating func read(block: [String], firstLine: Int, directive: String, fenceLine: Int) throws(Problem) {
        guard !block.isEmpty else { throw Problem(line: fenceLine, message: "an empty ```console block") }
        if directive.hasPrefix("<!-- not run") {
            let reason = directive.dropFirst("<!-- not run".count).drop { $0 == ":" || $0 == " " }
                .replacingOccurrences(of: "-->", with: "").trimmingCharacters(in: .whitespaces)
            guard !reason.isEmpty else {
                throw Problem(line: fenceLine - 1, message: "<!-- not run --> needs a reason: <!-- not run: REASON -->")
            }
            let command = block.first { $0.hasPrefix("$ ") }.map { String($0.dropFirst(2)) } ?? ""
            skipped.append(Skipped(line: fenceLine, command: command, reason: reason))
            return
        }
        var terminal = 1
        if directive.hasPrefix("<!-- in terminal") {
            let number = directive.dropFirst("<!-- in terminal".count).replacingOccurrences(of: "-->", with: "")
                .trimmingCharacters(in: .whitespaces)
            guard let parsed = Int(number), parsed >= 1 else {
                throw Problem(line: fenceLine - 1, message: "\(directive): write <!-- in terminal N --> with N a number from 1")
            }
            terminal = parsed
        }
        var output: [String] = []
        func flush() {
            if !output.isEmpty { steps.append(.output(terminal: terminal, output)) }
            output = []
        }
        var offset = 0
        while offset < block.count {
            let line = block[offset]
            if line.hasPrefix("$ ") {
                flush()
                var command = String(line.dropFirst(2))
                while command.hasSuffix(" \\"), offset + 1 < block.count {
                    offset += 1
                    command += "\n" + block[offset]
                }
                steps.append(.command(terminal: terminal, command))
            } else if line == "^C" {
                flush()
                steps.append(.interrupt(terminal: terminal))
            } else if line == "$" || line.hasPrefix("$\t") {
                throw Problem(line: firstLine + offset, message: "a `$` line without a command")
            } else {
                output.append(line)
            }
            offset += 1
        }
        flush()
    }
}
