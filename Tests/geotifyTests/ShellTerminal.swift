import Foundation
import GeotifyTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A terminal to replay README examples in: `bash` reading the typed commands from a
/// pipe, leading a process group of its own (so Ctrl-C, SIGINT to the group, reaches the
/// command running in it as a terminal's Ctrl-C does), its standard output and error
/// going to one file that is read back line by line.
///
/// After each command the shell prints a marker line (the record separator and the exit
/// status), so the terminal knows when a command has finished, as a prompt shows a user;
/// markers are not part of the lines shown.
final class ShellTerminal {
    /// The terminal's number in the README (`<!-- in terminal N -->`).
    let number: Int
    private let shell: ChildProcess
    private let input: FileHandle
    private let outputFile: URL
    /// Shown lines already matched by an expectation.
    private var consumed = 0
    /// Commands typed so far.
    private var typed = 0
    /// The commands typed, for messages.
    private var history: [String] = []

    private static let marker: Character = "\u{1E}"

    /// Starts the shell in `directory` with `environment`, writing what it shows to a
    /// file in `scratch`.
    init(number: Int, directory: URL, scratch: URL, environment: [String: String]) throws {
        self.number = number
        outputFile = scratch.appendingPathComponent("terminal-\(number).out")
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw TestSupportError("pipe: \(String(cString: strerror(errno)))") }
        defer { close(ends[0]) }
        // Neither end stays open in the shell beyond its standard input.
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        input = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
        shell = try ChildProcess(
            executable: "/bin/bash", arguments: ["--noprofile", "--norc"], environment: environment,
            outputFile: outputFile, standardInput: ends[0], newProcessGroup: true)
        try write("cd '\(directory.path)'\n")
    }

    deinit {
        // A test that failed half way: Ctrl-C first, so scripts stop what they started
        // (scripts/run-bridge its mosquitto), then SIGKILL whatever is left.
        shell.signalGroup(SIGINT)
        try? input.close()
        if !shell.waitForExit(timeout: 10) {
            shell.signalGroup(SIGKILL)
            _ = shell.waitForExit(timeout: 5)
        }
    }

    /// Types `command` once the command before has finished (waiting up to `timeout`
    /// seconds for that), with its standard input from /dev/null so it cannot read the
    /// commands that follow.
    func type(_ command: String, timeout: Double) throws {
        guard waitUntil(timeout: timeout, { finished >= typed }) else {
            throw TestSupportError("terminal \(number): `\(history.last ?? "")` still runs after \(timeout) s, so `\(command)` cannot be typed")
        }
        typed += 1
        history.append(command)
        try write("{ \(command)\n} </dev/null\nprintf '\\036%d\\n' \"$?\"\n")
    }

    /// Presses Ctrl-C.
    func interrupt() {
        shell.signalGroup(SIGINT)
    }

    /// Waits up to `timeout` seconds until the terminal has shown `expected` next (after
    /// replacing each key of `substitutions` in what it showed with its value), and
    /// consumes those lines; throws with both texts when it shows something else or not
    /// enough.
    func expect(_ expected: ExpectedLines, substitutions: [(String, String)], timeout: Double) throws {
        var comparison = ExpectedLines.Comparison.incomplete
        var seen: [String] = []
        waitUntil(timeout: timeout) {
            seen = Array(shown.dropFirst(consumed)).map { line in
                substitutions.reduce(line) { $0.replacingOccurrences(of: $1.0, with: $1.1) }
            }
            comparison = expected.compare(seen)
            return comparison != .incomplete
        }
        switch comparison {
        case .matched(let count):
            consumed += count
        case .incomplete, .differs:
            let what = comparison == .incomplete ? "did not show (within \(timeout) s)" : "showed something else than"
            throw TestSupportError("""
                terminal \(number) \(what) what the README says, after `\(history.last ?? "")`:
                --- README
                \(expected.lines.joined(separator: "\n"))
                --- terminal \(number)
                \(seen.joined(separator: "\n"))
                ---
                """)
        }
    }

    /// Ends the shell (`exit`, as closing the terminal after its last command) and
    /// returns what it showed that no expectation consumed; throws when it does not end
    /// within `timeout` seconds (something the README started is still running).
    func finish(timeout: Double) throws -> [String] {
        try write("exit\n")
        guard shell.waitForExit(timeout: timeout) else {
            throw TestSupportError("terminal \(number) still runs `\(history.last ?? "")` at the end of the README")
        }
        return Array(shown.dropFirst(consumed))
    }

    /// Everything the terminal showed so far, as it showed it.
    var text: String {
        (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
    }

    /// The complete lines shown so far, without the markers.
    private var shown: [String] {
        lines.shown
    }

    /// How many typed commands have finished.
    private var finished: Int {
        lines.finished
    }

    private var lines: (shown: [String], finished: Int) {
        var shown: [String] = []
        var finished = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropLast() {
            if let marker = line.firstIndex(of: Self.marker) {
                finished += 1
                // Output that did not end its line is shown before the prompt.
                if marker > line.startIndex { shown.append(String(line[..<marker])) }
            } else {
                shown.append(String(line))
            }
        }
        return (shown, finished)
    }

    private func write(_ text: String) throws {
        try input.write(contentsOf: Array(text.utf8))
    }
}
