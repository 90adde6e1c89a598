import Foundation
import GeotifyBridge
import GeotifyStore

/// `geotify check`: validates a fence file and prints every problem, without running.
enum CheckCommand {
    static let help = """
        usage: geotify check [options]

        Validates the fence file: prints each error and warning with the file, line,
        device and fence it concerns. Exits 0 when the file is valid, 1 when not.

        options:
        \(SettingsOptions.help)
        """

    static func run(_ words: [String]) throws(UsageError) -> Int32 {
        let arguments = try Arguments(words, command: "check", valued: SettingsOptions.names)
        guard arguments.positionals.isEmpty else {
            throw UsageError("unexpected argument \(arguments.positionals[0])", command: "check")
        }
        let settings = try SettingsOptions.settings(from: arguments, command: "check")
        let loaded = FenceFile(path: settings.fencesPath, limits: settings.limits, maximumBytes: settings.maximumFenceFileBytes).load()
        for warning in loaded.warnings { print("warning: \(warning)") }
        for error in loaded.errors { print("error: \(error)") }
        guard let book = loaded.book else {
            print("\(settings.fencesPath): \(loaded.errors.count) error\(loaded.errors.count == 1 ? "" : "s"), not valid")
            return 1
        }
        print("\(settings.fencesPath): valid, \(book.fenceCount) fence\(book.fenceCount == 1 ? "" : "s") for \(book.devices.count) device\(book.devices.count == 1 ? "" : "s")")
        return 0
    }
}
