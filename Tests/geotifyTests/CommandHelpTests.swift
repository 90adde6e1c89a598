import Foundation
import GeotifyBridge
import Testing
import GeotifyTestSupport

/// What `geotify` says about itself: each command's help lists exactly its own options,
/// `help` for something unknown fails with a suggestion, the version, and the settings
/// reference written from the table of keys.
@Suite("geotify help and version", .waiting)
struct CommandHelpTests {
    let directory: URL

    init() throws {
        directory = try makeTemporaryDirectory("help")
    }

    /// The options (`--name`) a help text lists at the start of an option line.
    func listedOptions(_ help: String) -> Set<String> {
        Set(help.split(separator: "\n").compactMap { line -> String? in
            let trimmed = line.drop { $0 == " " }
            guard line.hasPrefix("  --"), let name = trimmed.split(separator: " ").first else { return nil }
            return String(name)
        })
    }

    @Test(arguments: [
        ("run", ["--config", "--broker", "--fences", "--state-dir", "--log-level", "--reset-state"]),
        ("check", ["--config", "--fences"]),
        ("simulate", ["--config", "--fences", "--device", "--json", "--all", "--no-rules"]),
        ("status", ["--config", "--broker", "--timeout", "--json", "--online"]),
        ("notify", ["--config", "--state-dir", "--json"]),
        ("fences", ["--config", "--fences", "--id", "--lat", "--lon", "--radius", "--event", "--note", "--device", "--json", "--replace", "--shared", "--group", "--owntracks"]),
    ])
    func eachCommandsHelpListsOnlyItsOwnOptions(command: String, options: [String]) throws {
        let help = try runGeotify([command, "--help"], in: directory)
        #expect(help.status == 0)
        #expect(listedOptions(help.output) == Set(options))
        #expect(try runGeotify(["help", command], in: directory).output == help.output)
    }

    @Test func everyOptionAHelpListsIsAccepted() throws {
        // An option the help lists but the parser refuses would be a usage error naming it.
        let check = try runGeotify(["check", "--config", "none.json", "--fences", "none.json"], in: directory)
        #expect(!check.error.contains("unknown option"))
        let closed = try ClosedPort()
        defer { withExtendedLifetime(closed) {} }
        let status = try runGeotify(["status", "--broker", "mqtt://127.0.0.1:\(closed.port)", "--timeout", "9", "--json"], in: directory)
        #expect(!status.error.contains("unknown option"))
    }

    @Test func helpForSomethingUnknownFailsWithASuggestion() throws {
        let result = try runGeotify(["help", "simulat"], in: directory)
        #expect(result.status == 2)
        #expect(result.output == "")
        #expect(result.error.hasPrefix(#"geotify: no help for "simulat" (did you mean "simulate"? commands: run, check, fences, status, simulate, notify, state, version; topics: settings)"#))
        let nonsense = try runGeotify(["help", "nonsense"], in: directory)
        #expect(nonsense.status == 2)
        #expect(!nonsense.error.contains("did you mean"))
    }

    @Test func theVersionIsPrintedAndListed() throws {
        let flag = try runGeotify(["--version"], in: directory)
        #expect(flag.status == 0)
        #expect(flag.output.hasPrefix("geotify "))
        #expect(flag.output.split(separator: " ").last?.split(separator: ".").count == 3)
        #expect(try runGeotify(["version"], in: directory).output == flag.output)
        #expect(try runGeotify(["--help"], in: directory).output.contains("  version   print the version"))
    }

    @Test func settingsHelpDescribesEveryKeyOfTheTable() throws {
        let result = try runGeotify(["help", "settings"], in: directory)
        #expect(result.status == 0)
        let described = Set(result.output.split(separator: "\n").filter { !$0.hasPrefix(" ") }.compactMap { $0.split(separator: " ").first.map(String.init) })
        for key in Settings.keys {
            #expect(described.contains(key.name), "\(key.name) is not described")
        }
        #expect(result.output.contains("broker  mqtt://HOST:PORT or mqtts://HOST:PORT; default: \"mqtt://127.0.0.1:1883\"; flag: --broker URL\n"))
        #expect(result.output.contains("dwell  number >= 0 (s); default: off\n"))
        #expect(result.output.contains("lanes  whole number 1...256; default: the number of processors (at most 256)\n"))
        #expect(result.output.contains("logLevel  debug | info | warning | error; default: \"info\"; flag: --log-level LEVEL\n"))
    }

    /// docs/cli.md is written from these texts (scripts/cli-reference); it must hold
    /// each of them as the binary prints it.
    @Test(arguments: [["--help"], ["--version"], ["run", "--help"], ["check", "--help"], ["fences", "--help"],
                      ["simulate", "--help"], ["status", "--help"], ["notify", "--help"], ["state", "--help"], ["help", "settings"]])
    func theCLIReferenceHoldsEveryHelpText(words: [String]) throws {
        let reference = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../docs/cli.md")
        let document = try String(contentsOf: reference, encoding: .utf8)
        let help = try runGeotify(words, in: directory).output
            .split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) }
            .joined(separator: "\n")
        #expect(document.contains("```text\n" + help + "```\n"), "docs/cli.md is out of date for 'geotify \(words.joined(separator: " "))': run scripts/cli-reference")
    }
}
