import Foundation
import GeotifyCore
import GeotifyJSON
import GeotifyMQTT
import GeotifyStore

/// How a bridge runs: where the broker, the fence file and the state are, which topics
/// carry positions, and the limits. Read from the settings file (`config/geotify.json`)
/// and overridden by command-line flags.
///
/// Relative paths in a settings file are relative to the file's own directory, so the
/// example configuration works from any working directory.
public struct Settings: Sendable, Equatable {
    public var broker = BrokerAddress(host: "127.0.0.1", port: 1883, tls: false)
    /// The MQTT client id; fixed, so the broker keeps the session while the bridge is down.
    public var clientID = "geotify"
    public var fencesPath = "config/fences.json"
    public var stateDirectory = "state"
    /// The subscription filter for OwnTracks positions.
    public var ownTracksTopic = "owntracks/+/+"
    /// The subscription filter for plain JSON positions.
    public var locationTopic = "geotify/location/#"
    /// The first level of every topic the bridge publishes and of its command topics.
    public var topicPrefix = "geotify"
    public var limits = FenceLimits()
    public var maximumPayloadBytes = 65_536
    /// Refuse positions of devices that have no fences, as errors.
    public var strictDevices = false
    public var logLevel = Logger.Level.info
    /// How many serial evaluation lanes devices are spread over.
    public var lanes = max(1, ProcessInfo.processInfo.activeProcessorCount)
    public var durability = StateStore.Durability.normal
    /// The MQTT keep-alive in seconds.
    public var keepAlive = 30

    public init() {}

    /// The keys a settings file may hold.
    public static let keys = [
        "broker", "clientId", "fences", "stateDir", "owntracksTopic", "locationTopic", "topicPrefix",
        "minimumRadius", "maximumRadius", "maximumFencesPerDevice", "maximumPayloadBytes", "strictDevices",
        "logLevel", "lanes", "durability", "keepAlive",
    ]

    /// Reads a settings file: every key is optional; unknown keys and wrong values are
    /// errors that name the file and the key.
    public static func load(path: String) throws(SettingsError) -> Settings {
        let bytes: [UInt8]
        do {
            guard let read = try AtomicFile.read(path) else { throw SettingsError("\(path): no such file") }
            bytes = read
        } catch let error as SettingsError {
            throw error
        } catch {
            throw SettingsError("\(path): \(error)")
        }
        let json: JSON
        do {
            json = try JSONParser().parse(bytes)
        } catch {
            throw SettingsError("\(path):\(error.line): not valid JSON: \(error.reason) (column \(error.column))")
        }
        guard case .object(let object) = json else {
            throw SettingsError("\(path): the settings must be a JSON object, not \(json.kindDescription)")
        }
        let base = (path as NSString).deletingLastPathComponent
        var settings = Settings()
        let reader = Reader(object: object, file: path)
        for key in object.keys where !keys.contains(key) {
            throw SettingsError("\(path): unknown key \"\(key)\" (known keys: \(keys.joined(separator: ", ")))")
        }
        if let url = try reader.string("broker") {
            do {
                settings.broker = try BrokerAddress(parsing: url)
            } catch {
                throw SettingsError("\(path): \"broker\": \(error.message)")
            }
        }
        if let value = try reader.string("clientId") { settings.clientID = value }
        if let value = try reader.string("fences") { settings.fencesPath = resolve(value, against: base) }
        if let value = try reader.string("stateDir") { settings.stateDirectory = resolve(value, against: base) }
        if let value = try reader.string("owntracksTopic") { settings.ownTracksTopic = value }
        if let value = try reader.string("locationTopic") { settings.locationTopic = value }
        if let value = try reader.string("topicPrefix") { settings.topicPrefix = value }
        if let value = try reader.number("minimumRadius", atLeast: 0) { settings.limits.minimumRadius = value }
        if let value = try reader.number("maximumRadius", atLeast: 0) { settings.limits.maximumRadius = value }
        if let value = try reader.integer("maximumFencesPerDevice", atLeast: 1) { settings.limits.maximumFencesPerDevice = value }
        if let value = try reader.integer("maximumPayloadBytes", atLeast: 1) { settings.maximumPayloadBytes = value }
        if let value = try reader.bool("strictDevices") { settings.strictDevices = value }
        if let value = try reader.string("logLevel") {
            guard let level = Logger.Level(name: value) else {
                throw SettingsError("\(path): \"logLevel\" must be one of debug, info, warning, error, not \"\(value)\"")
            }
            settings.logLevel = level
        }
        if let value = try reader.integer("lanes", atLeast: 1) { settings.lanes = value }
        if let value = try reader.string("durability") {
            guard let durability = StateStore.Durability(rawValue: value) else {
                throw SettingsError("\(path): \"durability\" must be normal or full, not \"\(value)\"")
            }
            settings.durability = durability
        }
        if let value = try reader.integer("keepAlive", atLeast: 5) { settings.keepAlive = value }
        try settings.validate(file: path)
        return settings
    }

    /// Checks the combination of values; `file` names where they came from in the error.
    public func validate(file: String = "settings") throws(SettingsError) {
        guard limits.minimumRadius <= limits.maximumRadius else {
            throw SettingsError("\(file): minimumRadius \(JSONWriter.text(of: limits.minimumRadius)) is larger than maximumRadius \(JSONWriter.text(of: limits.maximumRadius))")
        }
        for (key, filter) in [("owntracksTopic", ownTracksTopic), ("locationTopic", locationTopic)] {
            do {
                _ = try TopicFilter(filter)
            } catch {
                throw SettingsError("\(file): \"\(key)\": \(error.message)")
            }
        }
        if topicPrefix.isEmpty || topicPrefix.contains(where: { $0 == "+" || $0 == "#" }) {
            throw SettingsError("\(file): \"topicPrefix\" must be non-empty and hold no '+' or '#'")
        }
        if clientID.isEmpty {
            throw SettingsError("\(file): \"clientId\" must not be empty: the broker keeps the bridge's session under it")
        }
    }

    private static func resolve(_ path: String, against base: String) -> String {
        if path.hasPrefix("/") || base.isEmpty { return path }
        return (base as NSString).appendingPathComponent(path)
    }

    /// Typed access to the settings object, with errors naming the file and key.
    private struct Reader {
        let object: JSONObject
        let file: String

        func string(_ key: String) throws(SettingsError) -> String? {
            guard let value = object[key] else { return nil }
            guard case .string(let text) = value else {
                throw SettingsError("\(file): \"\(key)\" must be a string, not \(value.kindDescription)")
            }
            return text
        }

        func number(_ key: String, atLeast minimum: Double) throws(SettingsError) -> Double? {
            guard let value = object[key] else { return nil }
            guard case .number(let number) = value else {
                throw SettingsError("\(file): \"\(key)\" must be a number, not \(value.kindDescription)")
            }
            guard number >= minimum else {
                throw SettingsError("\(file): \"\(key)\" must be at least \(JSONWriter.text(of: minimum)), not \(JSONWriter.text(of: number))")
            }
            return number
        }

        func integer(_ key: String, atLeast minimum: Int) throws(SettingsError) -> Int? {
            guard let number = try number(key, atLeast: Double(minimum)) else { return nil }
            guard number == number.rounded(), number < 1e9 else {
                throw SettingsError("\(file): \"\(key)\" must be a whole number, not \(JSONWriter.text(of: number))")
            }
            return Int(number)
        }

        func bool(_ key: String) throws(SettingsError) -> Bool? {
            guard let value = object[key] else { return nil }
            guard case .bool(let flag) = value else {
                throw SettingsError("\(file): \"\(key)\" must be true or false, not \(value.kindDescription)")
            }
            return flag
        }
    }
}
