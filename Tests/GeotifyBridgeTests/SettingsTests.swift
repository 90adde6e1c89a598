import Foundation
import Testing
import GeotifyBridge

@Suite("Settings")
struct SettingsTests {
    func load(_ text: String) throws(SettingsError) -> Settings {
        let directory = NSTemporaryDirectory() + "geotify-settings-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/geotify.json"
        _ = FileManager.default.createFile(atPath: path, contents: Data(text.utf8))
        return try Settings.load(path: path)
    }

    func message(_ text: String) -> String? {
        do {
            _ = try load(text)
            return nil
        } catch {
            return error.message.components(separatedBy: "geotify.json").last
        }
    }

    @Test func theExampleSettingsLoadAndPathsAreRelativeToTheFile() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/geotify.json").standardized.path
        let settings = try Settings.load(path: path)
        #expect(settings.fencesPath.hasSuffix("config/fences.json"))
        #expect(settings.broker.port == 1883)
        #expect(settings.ownTracksTopic == "owntracks/+/+")
    }

    @Test func valuesAreRead() throws {
        let settings = try load(#"{"broker": "mqtt://10.0.0.2:1884", "fences": "/etc/geotify/fences.json", "stateDir": "st", "strictDevices": true, "logLevel": "debug", "maximumFencesPerDevice": 5, "lanes": 3}"#)
        #expect(settings.broker.host == "10.0.0.2")
        #expect(settings.broker.port == 1884)
        #expect(settings.fencesPath == "/etc/geotify/fences.json")
        #expect(settings.stateDirectory.hasSuffix("/st"))
        #expect(settings.strictDevices)
        #expect(settings.logLevel == .debug)
        #expect(settings.limits.maximumFencesPerDevice == 5)
        #expect(settings.lanes == 3)
    }

    @Test(arguments: [
        (#"{"brocker": "x"}"#, #": unknown key "brocker" (known keys: broker, clientId, fences, stateDir, owntracksTopic, locationTopic, topicPrefix, minimumRadius, maximumRadius, maximumFencesPerDevice, maximumPayloadBytes, strictDevices, logLevel, lanes, durability, keepAlive)"#),
        (#"{"broker": "http://x"}"#, #": "broker": unsupported scheme "http" in "http://x"; use mqtt:// or mqtts://"#),
        (#"{"lanes": 0}"#, #": "lanes" must be at least 1, not 0"#),
        (#"{"lanes": 1.5}"#, #": "lanes" must be a whole number, not 1.5"#),
        (#"{"logLevel": "loud"}"#, #": "logLevel" must be one of debug, info, warning, error, not "loud""#),
        (#"{"strictDevices": "yes"}"#, #": "strictDevices" must be true or false, not a string"#),
        (#"{"owntracksTopic": "owntracks/alice"}"#, #": "owntracksTopic": the filter "owntracks/alice" has no '+' or '#' level to take the device identifier from"#),
        (#"{"minimumRadius": 10, "maximumRadius": 5}"#, #": minimumRadius 10 is larger than maximumRadius 5"#),
        ("{\n\"a\": }", #":2: not valid JSON: unexpected character '}', expected a JSON value (column 6)"#),
    ])
    func badSettingsNameTheKeyAndTheReason(text: String, expected: String) {
        #expect(message(text) == expected)
    }
}
