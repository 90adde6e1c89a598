import Foundation
import GeotifyJSON

/// Typed reads of one object of the `notify` settings, each refusing a wrong value with an
/// error that names the file, the place (`notify.targets[1] ("phone")`) and the key.
struct SettingsObject {
    let object: JSONObject
    /// The settings file, for errors and for resolving relative paths.
    let file: String
    /// Where the object is in the file, for errors.
    let place: String

    /// An error about `key`.
    func error(_ key: String, _ reason: String) -> DeliverySettingsError {
        DeliverySettingsError("\(file): \(place).\(key) \(reason)")
    }

    /// Refuses keys not in `known` and keys given twice.
    func checkKeys(_ known: [String]) throws(DeliverySettingsError) {
        if let duplicate = object.duplicateKeys.first {
            throw DeliverySettingsError("\(file): \(place) has the key \"\(duplicate)\" twice")
        }
        for key in object.keys where !known.contains(key) {
            throw DeliverySettingsError("\(file): \(place) has an unknown key \"\(key)\" (known keys: \(known.joined(separator: ", ")))")
        }
    }

    func string(_ key: String) throws(DeliverySettingsError) -> String? {
        guard let value = object[key] else { return nil }
        guard case .string(let text) = value else { throw error(key, "must be a string, not \(value.kindDescription)") }
        guard !text.isEmpty else { throw error(key, "must not be empty (leave it out instead)") }
        guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw error(key, "must not contain control characters (line breaks, tabs)")
        }
        return text
    }

    func requiredString(_ key: String) throws(DeliverySettingsError) -> String {
        guard let text = try string(key) else { throw DeliverySettingsError("\(file): \(place) needs \"\(key)\"") }
        return text
    }

    func strings(_ key: String) throws(DeliverySettingsError) -> [String]? {
        guard let value = object[key] else { return nil }
        guard case .array(let items) = value else { throw error(key, "must be an array of strings, not \(value.kindDescription)") }
        var texts: [String] = []
        for item in items {
            guard case .string(let text) = item, !text.isEmpty else {
                throw error(key, "must hold only non-empty strings, not \(item.kindDescription == "a string" ? "an empty one" : item.kindDescription)")
            }
            texts.append(text)
        }
        return texts
    }

    func number(_ key: String, in range: ClosedRange<Double>) throws(DeliverySettingsError) -> Double? {
        guard let value = object[key] else { return nil }
        guard case .number(let number) = value else { throw error(key, "must be a number, not \(value.kindDescription)") }
        guard range.contains(number) else {
            throw error(key, "must be from \(JSONWriter.text(of: range.lowerBound)) to \(JSONWriter.text(of: range.upperBound)), not \(JSONWriter.text(of: number))")
        }
        return number
    }

    func integer(_ key: String, in range: ClosedRange<Int>) throws(DeliverySettingsError) -> Int? {
        guard let value = object[key] else { return nil }
        guard case .number(let number) = value, number == number.rounded(), range.contains(Int(exactly: number) ?? Int.min) else {
            throw error(key, "must be a whole number from \(range.lowerBound) to \(range.upperBound), not \(JSONWriter().string(value))")
        }
        return Int(number)
    }

    func bool(_ key: String) throws(DeliverySettingsError) -> Bool? {
        guard let value = object[key] else { return nil }
        guard case .bool(let flag) = value else { throw error(key, "must be true or false, not \(value.kindDescription)") }
        return flag
    }

    func nested(_ key: String) throws(DeliverySettingsError) -> SettingsObject? {
        guard let value = object[key] else { return nil }
        guard case .object(let nested) = value else { throw error(key, "must be an object, not \(value.kindDescription)") }
        return SettingsObject(object: nested, file: file, place: "\(place).\(key)")
    }

    /// An `http://` or `https://` URL with a host; `key` defaults to `fallback`.
    func httpURL(_ key: String, default fallback: String? = nil) throws(DeliverySettingsError) -> String {
        guard let url = try string(key) ?? fallback else { throw DeliverySettingsError("\(file): \(place) needs \"\(key)\"") }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else { throw error(key, "must be an http:// or https:// URL with a host, not \"\(url)\"") }
        return url
    }

    /// A secret given as `{"file": PATH}` or `{"env": NAME}`, read now.
    func secret(_ key: String, environment: [String: String]) throws(DeliverySettingsError) -> Secret? {
        guard let value = object[key] else { return nil }
        guard case .object(let reference) = value, reference.members.count == 1,
              let member = reference.members.first, member.key == "file" || member.key == "env",
              case .string(let name) = member.value, !name.isEmpty
        else {
            throw error(key, "must be {\"file\": PATH} or {\"env\": NAME}: secrets are not written in the settings file")
        }
        do {
            return member.key == "env" ? try Secret.environment(name, in: environment) : try Secret.file(resolve(name))
        } catch {
            throw self.error(key, "cannot be read: \(error.message)")
        }
    }

    func requiredSecret(_ key: String, environment: [String: String]) throws(DeliverySettingsError) -> Secret {
        guard let secret = try secret(key, environment: environment) else {
            throw DeliverySettingsError("\(file): \(place) needs \"\(key)\" ({\"file\": PATH} or {\"env\": NAME})")
        }
        return secret
    }

    /// A path, relative to the settings file's directory when not absolute.
    func path(_ key: String) throws(DeliverySettingsError) -> String? {
        try string(key).map(resolve)
    }

    /// `path` as written in the settings file: relative to the file's directory.
    private func resolve(_ path: String) -> String {
        let base = (file as NSString).deletingLastPathComponent
        return path.hasPrefix("/") || base.isEmpty ? path : (base as NSString).appendingPathComponent(path)
    }
}
