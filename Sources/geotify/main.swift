import Foundation
import GeotifyBridge
import GeotifyCore

/// The `geotify` command: dispatches to a subcommand and turns usage errors into a
/// message on standard error and exit status 2.
let commands: [GeotifyCommand] = [
    GeotifyCommand(name: "run", summary: "run the bridge", help: { RunCommand.help }, run: { words throws(UsageError) in try RunCommand.run(words) }),
    GeotifyCommand(name: "check", summary: "validate the settings file and the fence file", help: { CheckCommand.help }, run: CheckCommand.run),
    GeotifyCommand(name: "fences", summary: "list, show, add, edit, remove, import and export fences", help: { FencesCommand.help }, run: FencesCommand.run),
    GeotifyCommand(name: "status", summary: "show the running bridge's statistics, read from the broker", help: { StatusCommand.help }, run: StatusCommand.run),
    GeotifyCommand(name: "simulate", summary: "replay a recorded track offline and print the notifications", help: { SimulateCommand.help }, run: SimulateCommand.run),
    GeotifyCommand(name: "notify", summary: "test delivery targets, show deliveries, retry dead letters", help: { NotifyCommand.help }, run: NotifyCommand.run),
    GeotifyCommand(name: "state", summary: "reshard device state when the number of instances changes", help: { StateCommand.help }, run: StateCommand.run),
    GeotifyCommand(name: "version", summary: "print the version (also: geotify --version)", help: { "usage: geotify version\n\nPrints the version: \(Version.line)" }, run: { _ in
        print(Version.line)
        return 0
    }),
]

/// Help topics that are not commands, each written when asked for.
let topics: [String: () -> String] = ["settings": { SettingsHelp.text }]

/// The help of `geotify` itself, written when asked for.
var overview: String {
    """
    usage: geotify <command> [options]

    Geotify \(Version.number): a geofence bridge for MQTT. Trackers publish positions; Geotify
    evaluates each device's fences and publishes entry/exit notifications and badge counts.

    commands:
    \(commands.map { "  " + $0.name.padding(toLength: 10, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))
      help      this help; a command's with 'geotify help COMMAND' (or COMMAND --help);
                every settings key with 'geotify help settings'

    Run 'geotify <command> --help' for a command's options.
    """
}

/// The help text for `name`, a command or a topic; a usage error with the nearest name
/// when there is none.
@MainActor func help(for name: String) throws(UsageError) -> String {
    if let command = commands.first(where: { $0.name == name }) { return command.help() }
    if let topic = topics[name] { return topic() }
    let names = commands.map(\.name) + topics.keys.sorted()
    let hint = NameSuggestion.nearest(to: name, in: names).map { "did you mean \"\($0)\"? " } ?? ""
    throw UsageError("no help for \"\(name)\" (\(hint)commands: \(commands.map(\.name).joined(separator: ", ")); topics: \(topics.keys.sorted().joined(separator: ", ")))", command: "help")
}

var words = Array(CommandLine.arguments.dropFirst())
let name = words.isEmpty ? "help" : words.removeFirst()

do {
    switch name {
    case "help", "--help", "-h":
        guard words.count <= 1 else { throw UsageError("help takes one command or topic, not \(words.count)", command: "help") }
        print(try words.first.map(help(for:)) ?? overview)
        exit(0)
    case "--version":
        print(Version.line)
        exit(0)
    default:
        guard let command = commands.first(where: { $0.name == name }) else {
            let hint = NameSuggestion.hint(for: name, in: commands.map(\.name) + ["help"])
            throw UsageError("unknown command \"\(name)\"\(hint)", command: "help")
        }
        if words.contains("--help") || words.contains("-h") {
            print(command.help())
            exit(0)
        }
        exit(try command.run(words))
    }
} catch {
    Logger.standardError("geotify: \(error)")
    exit(2)
}
