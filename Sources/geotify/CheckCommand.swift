import Foundation
import GeotifyBridge
import GeotifyCore
import GeotifyMQTT
import GeotifyStore

/// `geotify check`: validates the settings file and the fence file and prints every
/// problem, without running.
enum CheckCommand {
    static let options = SettingsOptions.options(["fences"])

    static let help = """
        usage: geotify check [options]

        Validates the settings file (every key, the broker credentials and TLS files it
        names, the OwnTracks keys file, the notification targets and their secrets) and the fence file: prints each error and warning with the file, line,
        device and fence it concerns. Exits 0 when both are valid, 1 when not.

        options:
        \(CommandOption.help(options))
        """

    static func run(_ words: [String]) throws(UsageError) -> Int32 {
        let arguments = try Arguments(words, command: "check", options: options)
        try arguments.expectNoPositionals()
        let chosen: SettingsOptions
        do {
            chosen = try SettingsOptions(arguments, flags: ["fences"])
        } catch {
            print("error: \(error.message)")
            print("\(SettingsOptions.file(arguments) ?? "settings"): not valid")
            return 1
        }
        let settings = chosen.settings
        var options = MQTTOptions(clientID: settings.clientID)
        do {
            for warning in try settings.security.configure(&options, broker: settings.broker) { print("warning: \(warning)") }
        } catch {
            print("error: \(chosen.file ?? "settings"): \(error.message)")
            print("\(chosen.file ?? "settings"): not valid")
            return 1
        }
        if let path = settings.ownTracksKeysFile {
            // Read as `run` reads it, which refuses to start with a bad one.
            do throws(SettingsError) {
                for warning in try OwnTracksKeys(contentsOf: path).warnings { print("warning: \(warning)") }
            } catch {
                print("error: \(error.message)")
                print("\(chosen.file ?? "settings"): not valid")
                return 1
            }
        }
        print(chosen.file.map { "\($0): valid settings" } ?? "settings: the defaults (no --config, and no \(SettingsOptions.defaultPath) here)")

        let file = FenceFile(path: settings.fencesPath, limits: settings.limits, maximumBytes: settings.maximumFenceFileBytes)
        let loaded = file.load()
        for warning in loaded.warnings { print("warning: \(warning)") }
        for error in loaded.errors { print("error: \(error)") }
        guard let book = loaded.book else {
            if !FileManager.default.fileExists(atPath: settings.fencesPath), let hint = chosen.hint(missing: "fences") { print(hint) }
            print("\(settings.fencesPath): \(Counted(loaded.errors.count, "error")), not valid")
            return 1
        }
        if let warning = FenceFileAccess.warning(settings: settings) { print("warning: \(warning)") }
        print("\(settings.fencesPath): valid, \(Counted(book.fenceCount, "fence")) for \(Counted(book.devices.count, "device"))")
        return 0
    }
}
