import Foundation
import GeotifyJSON

/// Typed reads of a settings object, with errors that name the file and the key, so
/// every part of the settings (`Settings`, `BrokerSecurity`) refuses a wrong value the
/// same way.
struct SettingsReader {
    let object: JSONObject
    let file: String
    /// Put before key names in errors: `tls.` inside the `tls` object.
    var prefix = ""

    func string(_ key: String) throws(SettingsError) -> String? {
        guard let value = object[key] else { return nil }
        guard case .string(let text) = value else {
            throw SettingsError("\(file): \"\(prefix)\(key)\" must be a string, not \(value.kindDescription)")
        }
        return text
    }

    /// A string that must not be empty when given (a name, a path).
    func nonEmptyString(_ key: String) throws(SettingsError) -> String? {
        guard let text = try string(key) else { return nil }
        guard !text.isEmpty else {
            throw SettingsError("\(file): \"\(prefix)\(key)\" must not be empty (leave it out instead)")
        }
        return text
    }

    func number(_ key: String, atLeast minimum: Double) throws(SettingsError) -> Double? {
        guard let value = object[key] else { return nil }
        guard case .number(let number) = value else {
            throw SettingsError("\(file): \"\(prefix)\(key)\" must be a number, not \(value.kindDescription)")
        }
        guard number >= minimum else {
            throw SettingsError("\(file): \"\(prefix)\(key)\" must be at least \(JSONWriter.text(of: minimum)), not \(JSONWriter.text(of: number))")
        }
        return number
    }

    func integer(_ key: String, atLeast minimum: Int) throws(SettingsError) -> Int? {
        guard let number = try number(key, atLeast: Double(minimum)) else { return nil }
        guard number == number.rounded(), number < 1e15 else {
            throw SettingsError("\(file): \"\(prefix)\(key)\" must be a whole number, not \(JSONWriter.text(of: number))")
        }
        return Int(number)
    }

    func bool(_ key: String) throws(SettingsError) -> Bool? {
        guard let value = object[key] else { return nil }
        guard case .bool(let flag) = value else {
            throw SettingsError("\(file): \"\(prefix)\(key)\" must be true or false, not \(value.kindDescription)")
        }
        return flag
    }

    /// `path` as written in a settings file in directory `base`: relative paths are
    /// relative to the file, so the example configuration works from anywhere.
    static func resolve(_ path: String, against base: String) -> String {
        if path.hasPrefix("/") || base.isEmpty { return path }
        return (base as NSString).appendingPathComponent(path)
    }
}
