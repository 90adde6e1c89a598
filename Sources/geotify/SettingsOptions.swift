import Foundation
import GeotifyBridge
import GeotifyMQTT

/// The options every subcommand that needs settings shares: `--config` picks the
/// settings file (default `config/geotify.json` when it exists), and `--broker`,
/// `--fences`, `--state-dir` and `--log-level` override what it says.
enum SettingsOptions {
    static let names: Set<String> = ["config", "broker", "fences", "state-dir", "log-level"]

    static let help = """
          --config FILE      settings file (default: config/geotify.json if present)
          --broker URL       broker, mqtt://HOST:PORT or mqtts://HOST:PORT
          --fences FILE      fence file (default: config/fences.json)
          --state-dir DIR    where device state is kept (default: state)
          --log-level LEVEL  debug, info, warning or error (default: info)
        """

    /// The settings from the file and the flags in `arguments`.
    static func settings(from arguments: Arguments, command: String) throws(UsageError) -> Settings {
        var settings = Settings()
        let defaultPath = "config/geotify.json"
        do {
            if let path = arguments.value("config") {
                settings = try Settings.load(path: path)
            } else if FileManager.default.fileExists(atPath: defaultPath) {
                settings = try Settings.load(path: defaultPath)
            }
        } catch {
            throw UsageError(error.message, command: command)
        }
        if let url = arguments.value("broker") {
            do {
                settings.broker = try BrokerAddress(parsing: url)
            } catch {
                throw UsageError("--broker: \(error.message)", command: command)
            }
        }
        if let path = arguments.value("fences") { settings.fencesPath = path }
        if let path = arguments.value("state-dir") { settings.stateDirectory = path }
        if let name = arguments.value("log-level") {
            guard let level = Logger.Level(name: name) else {
                throw UsageError("--log-level must be debug, info, warning or error, not \"\(name)\"", command: command)
            }
            settings.logLevel = level
        }
        return settings
    }
}
