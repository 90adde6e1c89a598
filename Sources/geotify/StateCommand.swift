import GeotifyBridge
import GeotifyCore
import GeotifyStore

/// `geotify state`: offline work on state directories. `reshard` moves each device's
/// state to the instance that owns it after a change of the number of instances that
/// share the devices (`StateReshard`).
enum StateCommand {
    static let help = """
        usage: geotify state reshard --from N --to M DIR-0 DIR-1 ...

        Moves each device's state (its fences' relations, pending changes, badge and
        last fix) from the state directories of N instances sharing the devices to
        those of M, so the new owner of each device goes on where the old one stopped:
        no enter repeated, no exit lost. Stop every instance first, then start M of
        them with "shard": "<index>/M".

        Give max(N, M) state directories, instance 0 first: the N old ones and, when
        growing, the new ones (created when missing). Messages a dropped instance
        decided but never handed to the broker move to instance 0. Positions still
        queued in the broker sessions of the old instances are not moved: see
        docs/scaling.md ("Resharding").

        options:
        \(CommandOption.help(options))
        """

    static let options = [
        CommandOption(name: "from", placeholder: "N", help: "the number of instances the states were written by"),
        CommandOption(name: "to", placeholder: "M", help: "the number of instances that will run"),
    ]

    static func run(_ words: [String]) throws(UsageError) -> Int32 {
        guard words.first == "reshard" else {
            throw UsageError(words.first.map { "unknown subcommand \"\($0)\"" } ?? "missing subcommand: geotify state reshard ...", command: "state")
        }
        let arguments = try Arguments(Array(words.dropFirst()), command: "state", options: options)
        guard let from = Int(arguments.value("from") ?? ""), let to = Int(arguments.value("to") ?? "") else {
            throw UsageError("--from and --to need numbers of instances", command: "state")
        }
        let report: StateReshard.Report
        do {
            report = try StateReshard.run(directories: arguments.positionals, from: from, to: to)
        } catch {
            Logger.standardError("geotify: \(error)")
            return 1
        }
        for damaged in report.damagedMarks { Logger.standardError("geotify: warning: \(damaged.warning)") }
        print("resharded \(from) → \(to): \(Counted(report.moved, "device state")) moved, \(report.kept) kept; devices per instance: \(report.devices.map(String.init).joined(separator: ", "))")
        if report.messagesMoved > 0 {
            print("\(Counted(report.messagesMoved, "message")) never handed to the broker moved to instance 0")
        }
        return 0
    }
}
