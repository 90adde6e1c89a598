import Foundation
import GeotifyBridge

/// The settings a subcommand runs with: `--config` picks the settings file (default: the
/// one `GEOTIFY_CONFIG` names, as in the Docker image, else `config/geotify.json` when
/// it exists), and the flags of the settings table (`Settings.keys`) that the
/// subcommand takes override what it says. Each subcommand names the flags it uses, so
/// its help lists only those.
struct SettingsOptions {
    /// The settings file option every subcommand with settings takes.
    static let config = CommandOption(
        name: "config", placeholder: "FILE", help: "the settings file (default: $\(variable) if set, else \(defaultPath) if it exists)")

    /// Where the settings file is looked for when neither `--config` nor the variable names one.
    static let defaultPath = "config/geotify.json"
    /// The environment variable that names the settings file when `--config` is not given.
    static let variable = "GEOTIFY_CONFIG"

    /// `--config` and the options of the settings keys whose flags are `flags`, with the
    /// keys' help and defaults.
    static func options(_ flags: [String]) -> [CommandOption] {
        [config] + flags.compactMap { flag in
            guard let key = Settings.key(flag: flag), let placeholder = key.flag?.placeholder else { return nil }
            return CommandOption(
                name: flag, placeholder: placeholder,
                help: "\(sentence(key.help)) Default \(key.defaultDescription); overrides \"\(key.name)\" of the settings file.")
        }
    }

    /// `text` starting in lower case, as the other options' help does, unless it starts
    /// with an abbreviation ("MQTT").
    private static func sentence(_ text: String) -> String {
        guard let first = text.first, let second = text.dropFirst().first, second.isLowercase else { return text }
        return first.lowercased() + text.dropFirst()
    }

    /// The settings in force.
    var settings: Settings
    /// The settings file read, if any.
    var file: String?
    /// The settings flags given.
    var given: Set<String>

    /// The settings from the settings file and the flags in `arguments`. A settings file
    /// that cannot be used is a `SettingsError`.
    init(_ arguments: Arguments, flags: [String]) throws(SettingsError) {
        settings = Settings()
        file = Self.file(arguments)
        if let file { settings = try Settings.load(path: file) }
        given = Set(flags.filter { arguments.value($0) != nil })
        for flag in flags {
            if let value = arguments.value(flag) { try settings.set(flag: flag, to: value) }
        }
        try settings.validate(file: file ?? "settings")
    }

    /// The settings file `arguments` and the environment choose, if any.
    static func file(_ arguments: Arguments) -> String? {
        let named = ProcessInfo.processInfo.environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        return arguments.value("config") ?? named ?? (FileManager.default.fileExists(atPath: defaultPath) ? defaultPath : nil)
    }

    /// The settings for a subcommand, a settings file that cannot be used being a usage error.
    static func settings(_ arguments: Arguments, flags: [String], command: String) throws(UsageError) -> SettingsOptions {
        do {
            return try SettingsOptions(arguments, flags: flags)
        } catch {
            throw UsageError(error.message, command: command)
        }
    }

    /// What to pass when the path of the settings key with the flag `--flag` names no
    /// file: said after "no such file", so a user run outside the repository, where
    /// the default paths point nowhere, knows what to do. Nil when the flag was given.
    func hint(missing flag: String) -> String? {
        guard !given.contains(flag), let key = Settings.key(flag: flag), let placeholder = key.flag?.placeholder else { return nil }
        if let file, key.value(of: settings) != key.value(of: Settings()) {
            return "hint: \(file) names it (\"\(key.name)\", relative to the settings file); pass --\(flag) \(placeholder) for another"
        }
        let noDefault = file == nil ? "; there is no \(Self.defaultPath) here" : ""
        return "hint: pass --\(flag) \(placeholder), or --config FILE with a settings file that names it (\"\(key.name)\")\(noDefault)"
    }
}
