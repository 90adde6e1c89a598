import Foundation
import GeotifyTestSupport
import Testing

/// The README cannot drift: a newcomer's walk-through replays every command example it
/// has, in order, in terminals of their own, on a fresh copy of the repository, against
/// the real scripts, a real mosquitto and a real bridge, and compares what each terminal
/// shows with what the README shows (`ReadmeExamples` has the convention, `ExpectedLines`
/// the placeholders). The parts are tested on their own first.
@Suite("The README's examples", .waiting)
struct ReadmeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    // MARK: The convention

    @Test func commandsAreTypedInTheirTerminalAndTheLinesAfterThemAreWhatItShows() throws {
        let examples = try ReadmeExamples(markdown: """
            Start:

            ```console
            $ ./scripts/run-bridge
            ...
            started
            ```

            <!-- in terminal 2 -->
            ```console
            $ mosquitto_pub -t a -m '{"x": 1}' \\
                -q 1
            $ true
            ```

            ```json
            {"not": "a command"}
            ```

            ```console
            ^C
            stopped
            ```
            """)
        #expect(examples.steps == [
            .command(terminal: 1, "./scripts/run-bridge"),
            .output(terminal: 1, ["...", "started"]),
            .command(terminal: 2, "mosquitto_pub -t a -m '{\"x\": 1}' \\\n    -q 1"),
            .command(terminal: 2, "true"),
            .interrupt(terminal: 1),
            .output(terminal: 1, ["stopped"]),
        ])
        #expect(examples.skipped.isEmpty)
    }

    @Test func anExampleNotRunSaysWhy() throws {
        let examples = try ReadmeExamples(markdown: """
            <!-- not run: needs a Docker engine -->
            ```console
            $ docker compose up -d
            ```
            """)
        #expect(examples.steps.isEmpty)
        #expect(examples.skipped == [.init(line: 2, command: "docker compose up -d", reason: "needs a Docker engine")])
        #expect(throws: ReadmeExamples.Problem(line: 1, message: "<!-- not run --> needs a reason: <!-- not run: REASON -->")) {
            try ReadmeExamples(markdown: "<!-- not run -->\n```console\n$ docker compose up\n```\n")
        }
    }

    @Test(arguments: ["sh", "bash", "shell"])
    func aShellBlockIsRefusedSoNoCommandGoesUnchecked(language: String) {
        #expect(throws: ReadmeExamples.Problem.self) {
            try ReadmeExamples(markdown: "Text\n\n```\(language)\nrm -rf local\n```\n")
        }
    }

    @Test func aDirectiveMustPrecedeAConsoleBlock() {
        #expect(throws: ReadmeExamples.Problem(line: 1, message: "<!-- in terminal 2 --> must be right before a ```console block")) {
            try ReadmeExamples(markdown: "<!-- in terminal 2 -->\n\n```console\n$ true\n```\n")
        }
    }

    @Test func placeholdersStandForWhatDiffersFromRunToRun() {
        let expected = ExpectedLines([
            "<time> info    started: 3 fences for 2 devices, <lanes>",
            #"geotify/event/alice/phone {"id":"alice/phone/home/enter/<tst>","tst":<tst>}"#,
        ])
        #expect(expected.compare([
            "2026-11-30T15:32:24.583Z info    started: 3 fences for 2 devices, 2 lanes",
            #"geotify/event/alice/phone {"id":"alice/phone/home/enter/1796052749","tst":1796052749}"#,
            "more",
        ]) == .matched(count: 2))
        #expect(expected.compare(["2026-11-30T15:32:24.583Z info    started: 3 fences for 2 devices, 2 lanes"]) == .incomplete)
        #expect(expected.compare(["2026-11-30 info    started: 3 fences for 2 devices, 2 lanes"]) == .differs(index: 0))
        // One core makes one lane, and the log says so in the singular.
        let started = ExpectedLines(["<time> info    started: 3 fences for 2 devices, <lanes>"])
        #expect(started.compare(["2026-11-30T15:32:24Z info    started: 3 fences for 2 devices, 1 lane"]) == .matched(count: 1))
        #expect(started.compare(["2026-11-30T15:32:24Z info    started: 3 fences for 2 devices, 1 lanes"]) == .differs(index: 0))
        #expect(started.compare(["2026-11-30T15:32:24Z info    started: 3 fences for 2 devices, 12 lanes"]) == .matched(count: 1))
        #expect(ExpectedLines(["a (b) [c] .*"]).compare(["a (b) [c] .*"]) == .matched(count: 1))
        #expect(ExpectedLines(["a (b) [c] .*"]).compare(["a (b) [c] xx"]) == .differs(index: 0))
    }

    @Test func threeDotsStandForAnyNumberOfLines() {
        let expected = ExpectedLines(["...", "installed /usr/local/bin/geotify: geotify <n>.<n>.<n>"])
        #expect(expected.compare(["installed /usr/local/bin/geotify: geotify 0.1.0"]) == .matched(count: 1))
        #expect(expected.compare(["Building for production...", "[3/4] Compiling", "installed /usr/local/bin/geotify: geotify 0.1.0"]) == .matched(count: 3))
        #expect(expected.compare(["Building for production..."]) == .incomplete)
    }

    // MARK: The walk-through

    @Test(.longWaiting) func aNewcomerWalksThroughEveryExampleOfTheReadme() throws {
        let scratch = try makeTemporaryDirectory("readme")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let clone = scratch.appendingPathComponent("geotify")
        try Self.cloneWorkingTree(to: clone)

        // The examples run against a broker on a free port instead of 1883 (the machine may
        // run one there, and tests talk to their own servers): the clone's example settings
        // and the mosquitto clients' default options name it, and what the terminals show
        // is read with 127.0.0.1:1883 in its place. scripts/install installs into the
        // scratch directory instead of /usr/local, and with the binary the test build made
        // instead of a release build (minutes).
        let port = try freePort()
        let settings = clone.appendingPathComponent("config/geotify.json")
        let example = try String(contentsOf: settings, encoding: .utf8)
        #expect(example.contains(#""broker": "mqtt://127.0.0.1:1883""#))
        try example.replacingOccurrences(of: "mqtt://127.0.0.1:1883", with: "mqtt://127.0.0.1:\(port)")
            .write(to: settings, atomically: true, encoding: .utf8)
        try Self.git(clone, ["init", "-q"])
        try Self.git(clone, ["add", "-A"])
        try Self.git(clone, ["-c", "user.name=newcomer", "-c", "user.email=newcomer@localhost", "commit", "-q", "-m", "clone"])
        let clientOptions = scratch.appendingPathComponent("xdg")
        try FileManager.default.createDirectory(at: clientOptions, withIntermediateDirectories: true)
        for client in ["mosquitto_pub", "mosquitto_sub", "mosquitto_rr"] {
            try "-p \(port)\n".write(to: clientOptions.appendingPathComponent(client), atomically: true, encoding: .utf8)
        }
        let prefix = scratch.appendingPathComponent("usr/local")
        // Only the system's directories and the install prefix: a geotify installed on the
        // machine cannot stand in for the one the README installs.
        let environment = [
            "PATH": "\(prefix.path)/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": ProcessInfo.processInfo.environment["HOME"] ?? scratch.path,
            "LANG": "C.UTF-8",
            "XDG_CONFIG_HOME": clientOptions.path,
            "PREFIX": prefix.path,
            "GEOTIFY_PREBUILT": geotifyExecutable.path,
        ]
        let substitutions = [("127.0.0.1:\(port)", "127.0.0.1:1883"), (prefix.path, "/usr/local")]

        let readme = try String(contentsOf: clone.appendingPathComponent("README.md"), encoding: .utf8)
        let examples = try ReadmeExamples(markdown: readme)
        #expect(examples.steps.count > 10)
        var terminals: [Int: ShellTerminal] = [:]
        func terminal(_ number: Int) throws -> ShellTerminal {
            if let open = terminals[number] { return open }
            let opened = try ShellTerminal(number: number, directory: clone, scratch: scratch, environment: environment)
            terminals[number] = opened
            return opened
        }
        defer { terminals.removeAll() }
        // What the broker scripts/run-bridge started saw (each connection, and whether it
        // ended with a DISCONNECT: "disconnected", or without: "closed its connection"),
        // for a failure's message: the clone goes with the test.
        func brokerLog() -> String {
            let log = (try? String(contentsOf: clone.appendingPathComponent("local/mosquitto.log"), encoding: .utf8)) ?? "(none)"
            return "--- local/mosquitto.log, its end\n" + log.split(separator: "\n").suffix(40).joined(separator: "\n")
        }
        do {
            for step in examples.steps {
                switch step {
                case .command(let number, let command):
                    try terminal(number).type(command, timeout: 120)
                case .interrupt(let number):
                    try terminal(number).interrupt()
                case .output(let number, let lines):
                    try terminal(number).expect(ExpectedLines(lines), substitutions: substitutions, timeout: 60)
                }
            }
        } catch {
            throw TestSupportError("\(error)\n\(brokerLog())")
        }
        for number in terminals.keys.sorted() {
            let rest = try terminals[number]!.finish(timeout: 30)
            #expect(rest.isEmpty, "terminal \(number) showed more than the README says:\n\(rest.joined(separator: "\n"))\n\(brokerLog())")
        }
        #expect(try Self.git(clone, ["status", "--porcelain"]) == "", "the examples changed tracked files")
        let shown = terminals.values.map(\.text).joined(separator: "\n")
        let pid = try #require(runBridgeBrokerPID(in: shown, port: port), "scripts/run-bridge said nothing of the broker it started")
        #expect(waitUntilEnded(pid: pid), "the broker scripts/run-bridge started (pid \(pid)) still runs")
    }

    /// Copies the working tree's files that git would commit (tracked or new, not
    /// ignored, as they are now) to `destination`: what a clone of the change holds,
    /// without the fuzzers' corpus. No example reads `Fuzz/Corpus`, and its 4 700 small
    /// files were most of the copy: copying and committing them again in the clone cost
    /// 8 s of the kernel's time on an ext4 disk, a sixth of the whole suite's.
    /// `cp` copies them, in a process of its own: had this process held the copies open
    /// for writing, a process another test started meanwhile could have inherited one,
    /// and running a copied script would then fail with ETXTBSY ("Text file busy"), as
    /// `./scripts/install` did once in CI.
    static func cloneWorkingTree(to destination: URL) throws {
        let manager = FileManager.default
        let files = try git(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
            .split(separator: "\0").map(String.init)
            // A tracked file deleted in the working tree is not part of the change.
            .filter { manager.fileExists(atPath: root.appendingPathComponent($0).path) }
            .filter { !$0.hasPrefix("Fuzz/Corpus/") }
        try manager.createDirectory(at: destination, withIntermediateDirectories: true)
        try runCommand("env", ["-C", root.path, "cp", "--parents", "--target-directory", destination.path, "--"] + files)
    }

    @discardableResult
    static func git(_ directory: URL, _ arguments: [String]) throws -> String {
        try runCommand("git", ["-C", directory.path] + arguments)
    }
}
