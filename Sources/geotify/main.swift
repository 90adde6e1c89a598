import Foundation
import GeotifyBridge

/// The `geotify` command: dispatches to a subcommand and turns usage errors into a
/// message on standard error and exit status 2.
let overview = """
    usage: geotify <command> [options]

    Geotify: a geofence bridge for MQTT. Trackers publish positions; Geotify evaluates
    each device's fences and publishes entry/exit notifications and badge counts.

    commands:
      run      run the bridge
      check    validate a fence file
      fences   list, show, add, edit, remove, import and export fences
      status   show the running bridge's statistics, read from the broker
      simulate replay a recorded track offline and print the notifications
      notify   test delivery targets, show their queues, retry dead letters
      help     show this help, or a command's: geotify help run

    Run 'geotify <command> --help' for a command's options.
    """

let helps = [
    "run": RunCommand.help, "check": CheckCommand.help, "fences": FencesCommand.help, "status": StatusCommand.help, "simulate": SimulateCommand.help,
    "notify": NotifyCommand.help,
]
var words = Array(CommandLine.arguments.dropFirst())
let command = words.isEmpty ? "help" : words.removeFirst()

if words.contains("--help") || words.contains("-h"), let help = helps[command] {
    print(help)
    exit(0)
}
do {
    switch command {
    case "run":
        try RunCommand.run(words)
    case "check":
        exit(try CheckCommand.run(words))
    case "fences":
        exit(try FencesCommand.run(words))
    case "status":
        exit(try StatusCommand.run(words))
    case "simulate":
        exit(try SimulateCommand.run(words))
    case "notify":
        exit(try NotifyCommand.run(words))
    case "help", "--help", "-h":
        print(words.first.flatMap { helps[$0] } ?? overview)
        exit(0)
    default:
        throw UsageError("unknown command \"\(command)\"", command: "help")
    }
} catch {
    Logger.standardError("geotify: \(error)")
    exit(2)
}
