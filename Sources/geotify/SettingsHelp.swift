import GeotifyBridge

/// `geotify help settings`: every key of the settings file with its type, default, flag
/// and what it does, written from the table of keys (`Settings.keys`) so it cannot
/// drift from what the loader accepts.
enum SettingsHelp {
    static var text: String {
        let entries = Settings.keys.map { key in
            var facts = [key.kind.description + (key.unit.map { " (\($0))" } ?? "")]
            if key.kind != .object { facts.append("default: \(key.defaultDescription)") }
            if let flag = key.flag { facts.append("flag: --\(flag.name) \(flag.placeholder)") }
            let help = CommandOption.wrap(key.help, width: 76).map { "    " + $0 }.joined(separator: "\n")
            return "\(key.name)  \(facts.joined(separator: "; "))\n\(help)"
        }
        return """
            usage: geotify run --config FILE (and check, fences, simulate, status)

            The settings file is a JSON object; every key is optional. Relative paths in it
            are relative to the settings file's own directory. A key with a dot is a member
            of an object: "tls.caFile" is written {"tls": {"caFile": "ca.crt"}}. A flag
            overrides its key. An unknown key or a wrong value stops the command with the
            file, the key and the reason.

            \(entries.joined(separator: "\n"))
            """
    }
}
