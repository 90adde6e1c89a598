import GeotifyCore
import GeotifyJSON
import GeotifyStore

/// Reads a settings file's object into `Settings` through the table of keys
/// (`Settings.keys`): each member is the key of its name, the members of a nested
/// object (`homeassistant`, `tls`) the keys `<object>.<member>`. An unknown key is
/// refused, with the nearest known key at its level suggested; so is a key written twice.
struct SettingsReader {
    let keys: [SettingsKey]
    let source: SettingsSource

    /// Reads every member of `object`, whose keys are named `prefix` + member. A section
    /// (`Kind.section`) is read whole by its key's own reader.
    func read(_ object: JSONObject, into settings: inout Settings, prefix: String = "") throws(SettingsError) {
        if let duplicate = object.duplicateKeys.first {
            throw source.error(key: prefix + duplicate, "written more than once")
        }
        for member in object.members {
            let name = prefix + member.key
            guard let key = keys.first(where: { $0.name == name }) else {
                throw unknown(name, prefix: prefix)
            }
            if key.kind == .object {
                guard case .object(let nested) = member.value else {
                    let members = self.members(of: name + ".").joined(separator: ", ")
                    throw source.error(FenceIssue(.wrongType, "\"\(name)\" must be an object with \(members), not \(member.value.kindDescription)"))
                }
                try key.read(member.value, &settings, source)
                try read(nested, into: &settings, prefix: name + ".")
            } else {
                try key.read(member.value, &settings, source)
            }
        }
    }

    /// The names of the keys directly under `prefix` (empty: the top level).
    private func members(of prefix: String) -> [String] {
        keys.map(\.name).filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }.filter { !$0.contains(".") }
    }

    private func unknown(_ name: String, prefix: String) -> SettingsError {
        let typed = String(name.dropFirst(prefix.count))
        let hint = NameSuggestion.nearest(to: typed, in: members(of: prefix)).map { "did you mean \"\(prefix)\($0)\"?" }
        switch source.origin {
        case .file(let path):
            return SettingsError("\(path): unknown key \"\(name)\" (\(hint ?? "'geotify help settings' lists the keys"))")
        case .flag(let flag):
            return SettingsError("--\(flag): unknown key \"\(name)\"")
        }
    }
}
