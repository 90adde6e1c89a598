import Foundation
import GeotifyTestSupport
import Testing
import GeotifyBridge
import GeotifyCore
import GeotifyJSON
import GeotifyStore

@Suite("Settings")
struct SettingsTests {
    func load(_ text: String) throws(SettingsError) -> Settings {
        let directory = temporaryDirectoryPath("settings")
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

    /// The message loading the settings file `path` fails with.
    func refusal(_ path: String) -> String? {
        do {
            _ = try Settings.load(path: path)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func aSettingsPathThatIsNotARegularFileIsRefusedUnread() throws {
        // A device that ends at once: read, it would have been empty, "not valid JSON".
        let device = try #require(refusal("/dev/null"))
        try #require(device.contains("/dev/null") && device.contains("not a regular file (a character device)"), "\(device)")
        // A FIFO without a writer: opening it to read would wait for one for ever.
        let directory = temporaryDirectoryPath("settings")
        let fifo = directory + "/geotify.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        let message = refusal(fifo)
        #expect(message?.contains(fifo) == true && message?.contains("not a regular file (a FIFO)") == true, "\(message ?? "loaded")")
    }

    @Test func anOversizedSettingsFileIsRefusedUnread() throws {
        let directory = temporaryDirectoryPath("settings")
        let path = directory + "/geotify.json"
        _ = FileManager.default.createFile(atPath: path, contents: Data("{}".utf8))
        #expect(truncate(path, off_t(FileSizeLimit.settings.bytes + 1)) == 0, "a sparse file past the limit")
        let message = refusal(path)
        #expect(message?.contains(path) == true, "\(message ?? "loaded")")
        #expect(message?.contains("the file is \(FileSizeLimit.settings.bytes + 1) bytes; at most \(FileSizeLimit.settings.bytes) are accepted (the limit for a settings file, 1 MiB)") == true, "\(message ?? "loaded")")
        #expect(truncate(path, off_t(FileSizeLimit.settings.bytes)) == 0)
        #expect(refusal(path)?.contains("not valid JSON") == true, "a file at the limit is read")
    }

    @Test func theExampleSettingsLoadAndPathsAreRelativeToTheFile() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../config/geotify.json").standardized.path
        let settings = try Settings.load(path: path)
        #expect(settings.fencesPath.hasSuffix("config/fences.json"))
        #expect(settings.broker.port == 1883)
        #expect(settings.ownTracksTopic == "owntracks/+/+")
    }

    @Test func devicesLinkToTheWebConsoleUnlessAnotherPageIsSet() throws {
        #expect(try load(#"{"http": {"listen": "127.0.0.1:8091"}}"#).homeAssistantDeviceURL == "http://127.0.0.1:8091/")
        #expect(try load(#"{"http": {"listen": "192.168.1.2:80", "basePath": "/geotify/", "users": "users.htpasswd"}}"#)
            .homeAssistantDeviceURL == "http://192.168.1.2:80/geotify/")
        #expect(try load(#"{"http": {"listen": "[::1]:8091"}}"#).homeAssistantDeviceURL == "http://[::1]:8091/")
        #expect(try load(#"{"http": {"listen": "0.0.0.0:8091", "users": "users.htpasswd"}}"#).homeAssistantDeviceURL == nil,
                "every interface names no address to link to")
        #expect(try load(#"{"http": {"listen": "127.0.0.1:0"}}"#).homeAssistantDeviceURL == nil, "a port the system chooses is unknown")
        #expect(try load(#"{}"#).homeAssistantDeviceURL == nil, "no web console")
        let set = try load(#"{"http": {"listen": "0.0.0.0:8091", "users": "users.htpasswd"}, "homeassistant": {"configurationUrl": "https://geotify.example.org/"}}"#)
        #expect(set.homeAssistantDeviceURL == "https://geotify.example.org/", "the setting wins")
        let both = try load(#"{"http": {"listen": "127.0.0.1:8091"}, "homeassistant": {"configurationUrl": "https://geotify.example.org/"}}"#)
        #expect(both.homeAssistantDeviceURL == "https://geotify.example.org/", "also over an address the console names")
    }

    @Test func valuesAreRead() throws {
        let settings = try load(#"{"broker": "mqtt://10.0.0.2:1884", "fences": "/etc/geotify/fences.json", "stateDir": "st", "strictDevices": true, "logLevel": "debug", "maximumFencesPerDevice": 5, "lanes": 3, "maximumWaitingMessages": 1024}"#)
        #expect(settings.broker.host == "10.0.0.2")
        #expect(settings.broker.port == 1884)
        #expect(settings.fencesPath == "/etc/geotify/fences.json")
        #expect(settings.stateDirectory.hasSuffix("/st"))
        #expect(settings.strictDevices)
        #expect(settings.logLevel == .debug)
        #expect(settings.limits.maximumFencesPerDevice == 5)
        #expect(settings.lanes == 3)
        #expect(settings.maximumWaitingMessages == 1_024)
        #expect(try load("{}").maximumWaitingMessages == 1_024)
    }

    @Test func anUnknownKeyIsRefusedWithTheNearestKnownOne() {
        #expect(message(#"{"brocker": "x"}"#) == #": unknown key "brocker" (did you mean "broker"?)"#)
        #expect(message(#"{"statsIntervall": 5}"#) == #": unknown key "statsIntervall" (did you mean "statsInterval"?)"#)
        #expect(message(#"{"clientID": "x"}"#) == #": unknown key "clientID" (did you mean "clientId"?)"#)
        #expect(message(#"{"homeassistant": {"prefx": "ha"}}"#) == #": unknown key "homeassistant.prefx" (did you mean "homeassistant.prefix"?)"#)
        #expect(message(#"{"xyzzy": 1}"#) == #": unknown key "xyzzy" ('geotify help settings' lists the keys)"#)
        #expect(message(#"{"broker": "mqtt://a", "broker": "mqtt://b"}"#) == #": "broker": written more than once"#)
    }

    @Test func commandSettingsAreRead() throws {
        let settings = try load(#"{"commands": false, "commandDevices": ["alice/phone", "fleet/#"], "previewTimeout": 60}"#)
        #expect(!settings.commandsEnabled)
        #expect(settings.commandDevices == ["alice/phone", "fleet/#"])
        #expect(settings.previewTimeout == 60)
        #expect(message(#"{"commandDevices": "all"}"#) == #": "commandDevices" must be an array of strings, not a string"#)
    }

    @Test func deviceTopicsAreReadAndHomeAssistantKeepsThoseItReads() throws {
        let settings = try load(#"{"deviceTopics": ["tracker", "state", "state"], "homeassistant": {"enabled": false}}"#)
        #expect(settings.deviceTopics == [.state, .tracker], "in their own order, once each")
        #expect(try load("{}").deviceTopics == DeviceTopic.allCases)
        #expect(try load(#"{"deviceTopics": ["badge", "presence", "state"]}"#).homeAssistantEnabled)
        #expect(message(#"{"deviceTopics": ["state", "badge"]}"#)
                == #": "deviceTopics" leaves out "presence", which Home Assistant's entities read: add it, or set "homeassistant": {"enabled": false}"#)
        #expect(message(#"{"deviceTopics": ["state", "presence", "tracker"]}"#)
                == #": "deviceTopics" leaves out "badge", which Home Assistant's entities read: add it, or set "homeassistant": {"enabled": false}"#,
                "the badge sensor reads the badge topic")
        #expect(message(#"{"deviceTopics": ["state", "states"], "homeassistant": {"enabled": false}}"#)
                == #": "deviceTopics[1]" must be one of state, presence, tracker, badge, not "states" (did you mean "state"?)"#)
        #expect(message(#"{"deviceTopics": "state"}"#) == #": "deviceTopics" must be an array of strings, not a string"#)
    }

    @Test func transitionRulesAreRead() throws {
        let settings = try load(#"{"maximumAccuracy": 100, "accuracyAware": false, "hysteresis": 25, "minimumDuration": 30, "dwell": 600, "initialTrigger": "enter", "maximumAge": 3600, "maximumFutureSkew": 60}"#)
        #expect(settings.rules == TransitionRules(
            maximumAccuracy: 100, accuracyAware: false, hysteresis: 25, minimumDuration: 30, dwell: 600, initialTrigger: .enter))
        #expect(settings.acceptance == FixAcceptance(maximumAge: 3600, maximumFutureSkew: 60))
        #expect(try load("{}").rules == TransitionRules())
    }

    @Test(arguments: [
        (#"{"broker": "http://x"}"#, #": "broker": unsupported scheme "http" in "http://x"; use mqtt:// or mqtts://"#),
        (#"{"lanes": 0}"#, #": lanes 0 is outside 1...256"#),
        (#"{"lanes": 1.5}"#, #": "lanes" must be a whole number, not 1.5"#),
        (#"{"initialTrigger": "always"}"#, #": "initialTrigger" must be one of none, enter, exit, not "always""#),
        (#"{"initialTrigger": "enters"}"#, #": "initialTrigger" must be one of none, enter, exit, not "enters" (did you mean "enter"?)"#),
        (#"{"dwell": 0}"#, #": dwell must be more than 0 seconds (leave it out for no dwell)"#),
        (#"{"hysteresis": -1}"#, #": hysteresis -1 must not be negative"#),
        (#"{"logLevel": "loud"}"#, #": "logLevel" must be one of debug, info, warning, error, not "loud""#),
        (#"{"logLevel": "warn"}"#, #": "logLevel" must be one of debug, info, warning, error, not "warn" (did you mean "warning"?)"#),
        (#"{"homeassistant": true}"#, #": "homeassistant" must be an object with enabled, prefix, configurationUrl, supportUrl, not a Boolean"#),
        (#"{"strictDevices": "yes"}"#, #": "strictDevices" must be true or false, not a string"#),
        (#"{"owntracksTopic": "owntracks/alice"}"#, #": "owntracksTopic": the filter "owntracks/alice" has no '+' or '#' level to take the device identifier from"#),
        (#"{"minimumRadius": 10, "maximumRadius": 5}"#, #": minimumRadius 10 is larger than maximumRadius 5"#),
        ("{\n\"a\": }", #":2: not valid JSON: unexpected character '}', expected a JSON value (column 6)"#),
        (#"{"http": "127.0.0.1:8091"}"#, #": "http" must be an object like {"listen": "127.0.0.1:8091"}, not a string"#),
        (#"{"http": {"listen": "127.0.0.1:8091", "port": 1}}"#,
         #": unknown key "http.port" (one of basePath, headerTimeout, idleTimeout, leaflet, listen, maximumBodyBytes, maximumConnections, maximumHeaderBytes, recentNotifications, roles, threads, tileAttribution, tiles, users)"#),
    ])
    func badSettingsNameTheKeyAndTheReason(text: String, expected: String) {
        #expect(message(text) == expected)
    }

    /// The checks of the whole combination (`Settings.validate`): the radii may be equal,
    /// and the names every topic and the broker session hang on must not be empty.
    @Test func theCombinationIsCheckedAfterTheKeys() throws {
        let equal = try load(#"{"minimumRadius": 10, "maximumRadius": 10}"#)
        #expect(equal.limits.minimumRadius == 10 && equal.limits.maximumRadius == 10, "one radius for every fence is allowed")
        #expect(message(#"{"clientId": ""}"#) == #": "clientId" must not be empty: the broker keeps the bridge's session under it"#)
        #expect(message(#"{"topicPrefix": ""}"#) == #": "topicPrefix" must be non-empty and hold no '+' or '#'"#)
        #expect(message(#"{"topicPrefix": "geo/+"}"#) == #": "topicPrefix" must be non-empty and hold no '+' or '#'"#)
        #expect(message(#"{"homeassistant": {"prefix": ""}}"#) == #": the Home Assistant "prefix" must be non-empty and hold no '+' or '#'"#)
    }

    /// A position subscription that matches what the bridge publishes would feed it its
    /// own messages: it refused `geotify/error` as a position and published a new error
    /// for it, without end. Refused, naming the topic both match; the bridge's inputs
    /// (its command topics) and the defaults are fine.
    @Test(arguments: [
        (##"{"owntracksTopic": "#"}"##, ##""owntracksTopic" "#" also matches geotify/error, where the bridge publishes refused input and failures"##),
        (##"{"owntracksTopic": "+/+"}"##, ##""owntracksTopic" "+/+" also matches geotify/error, where"##),
        (##"{"locationTopic": "geotify/#"}"##, ##""locationTopic" "geotify/#" also matches geotify/error, where"##),
        (##"{"locationTopic": "site/+/#", "topicPrefix": "site/a"}"##, ##""locationTopic" "site/+/#" also matches site/a/error, where"##),
        (##"{"locationTopic": "homeassistant/#"}"##, ##"also matches homeassistant/+/+/+/config, where the bridge publishes Home Assistant discovery configs"##),
        (##"{"locationTopic": "owntracks/#"}"##, ##"also matches owntracks/+/+/event, where the bridge publishes OwnTracks transitions (owntracksTransitions)"##),
        (##"{"owntracksTopic": "ot/#"}"##, ##""owntracksTopic" "ot/#" also matches ot/+/event, where the bridge publishes OwnTracks transitions"##),
        (##"{"owntracksTopic": "ot/+/+", "owntracksTransitions": false, "owntracksWaypoints": true, "locationTopic": "ot/+/+/+"}"##, ##"also matches ot/+/+/cmd, where the bridge publishes OwnTracks waypoint commands"##),
        (##"{"locationTopic": "replies/#", "responseTopicPrefix": "replies/"}"##, ##"also matches replies/+/#, where the bridge publishes MQTT v5 command responses"##),
        (##"{"locationTopic": "resp-a/#", "responseTopicPrefix": "resp-"}"##, ##"also matches resp-a/#, where the bridge publishes MQTT v5 command responses"##),
        (##"{"locationTopic": "+/loc", "responseTopicPrefix": "resp-"}"##, ##"also matches resp-<device>/loc, where the bridge publishes MQTT v5 command responses"##),
        (##"{"locationTopic": "r/#", "responseTopicPrefix": "r/resp-"}"##, ##""locationTopic" "r/#" also matches r/resp-<device>/#, where the bridge publishes MQTT v5 command responses"##),
        (##"{"locationTopic": "geotify/shard/#", "shard": "1/2"}"##, ##"also matches geotify/shard/1/status, where the bridge publishes its online/offline status"##),
        (##"{"locationTopic": "geotify/occupancy/+/+"}"##, ##""locationTopic" "geotify/occupancy/+/+" also matches geotify/occupancy/+/+, where the bridge publishes shared fences' occupancy"##),
        (##"{"locationTopic": "geotify/shard/0/+", "shard": "1/2"}"##, ##"also matches geotify/shard/0/+, where the bridge publishes the instances' status, statistics and occupancy parts"##),
    ])
    func aPositionFilterMatchingWhatTheBridgePublishesIsRefused(text: String, expected: String) {
        let refusal = message(text) ?? "accepted"
        #expect(refusal.contains(expected), "\(refusal)")
    }

    /// The bridge's inputs were checked only against what it publishes, not against
    /// each other: a `locationTopic` of `geotify/cmd/#` read every command as a position
    /// (the router tries positions first), `homeassistant/+` read Home Assistant's birth
    /// message as one, and the command topics or Home Assistant's birth topic could be
    /// topics the bridge publishes (responses, discovery configs, OwnTracks transitions).
    /// Refused, naming a topic both match.
    @Test(arguments: [
        (##"{"locationTopic": "geotify/cmd/#"}"##, ##": "locationTopic" "geotify/cmd/#" also matches geotify/cmd/#, where the bridge reads commands (geotify/cmd/#): a message there would be taken as one of them and lost to the other; choose settings that keep its inputs apart (docs/mqtt.md)"##),
        (##"{"owntracksTopic": "geotify/cmd/+", "owntracksTransitions": false}"##, ##""owntracksTopic" "geotify/cmd/+" also matches geotify/cmd/+, where the bridge reads commands"##),
        (##"{"owntracksTopic": "geotify/cmd/+"}"##, ##": the command filter geotify/cmd/# (of "topicPrefix") also matches geotify/cmd/+/event, where the bridge publishes OwnTracks transitions (owntracksTransitions): it would read its own messages as commands"##),
        (##"{"locationTopic": "site/cmd/+/#", "topicPrefix": "site"}"##, ##""locationTopic" "site/cmd/+/#" also matches site/cmd/+/#, where the bridge reads commands (site/cmd/#)"##),
        (##"{"locationTopic": "homeassistant/+"}"##, ##""locationTopic" "homeassistant/+" also matches homeassistant/status, where the bridge reads Home Assistant's birth message (homeassistant/status)"##),
        (##"{"owntracksTransitions": false, "locationTopic": "owntracks/#"}"##, ##""owntracksTopic" "owntracks/+/+" also matches owntracks/+/+, where the bridge reads plain JSON positions (owntracks/#)"##),
        (##"{"homeassistant": {"prefix": "geotify/cmd"}}"##, ##": the command filter geotify/cmd/# (of "topicPrefix") also matches geotify/cmd/+/+/+/config, where the bridge publishes Home Assistant discovery configs"##),
        (##"{"homeassistant": {"prefix": "ha"}, "responseTopicPrefix": "ha/"}"##, ##": Home Assistant's birth topic ha/status (of "homeassistant.prefix") also matches ha/status, where the bridge publishes MQTT v5 command responses (responseTopicPrefix): it would read its own messages as Home Assistant's birth message"##),
        (##"{"responseTopicPrefix": "geotify/cmd/"}"##, ##": the command filter geotify/cmd/# (of "topicPrefix") also matches geotify/cmd/+/#, where the bridge publishes MQTT v5 command responses"##),
    ])
    func inputsThatMatchOneTopicAreRefused(text: String, expected: String) {
        let refusal = message(text) ?? "accepted"
        #expect(refusal.contains(expected), "\(refusal)")
    }

    @Test func inputsApartAreFine() throws {
        _ = try load(#"{"locationTopic": "homeassistant/+", "homeassistant": {"enabled": false}}"#)
        _ = try load(#"{"homeassistant": {"prefix": "geotify/cmd"}, "topicPrefix": "geo"}"#)
        _ = try load(#"{"responseTopicPrefix": "geotify/cmdx/"}"#)
        _ = try load(#"{"locationTopic": "owntracks/+/+/+", "owntracksTransitions": false, "owntracksWaypoints": false}"#)
    }

    @Test func positionFiltersOutsideThePublishedTopicsAreFine() throws {
        _ = try load("{}")
        _ = try load(#"{"locationTopic": "geotify/cmdx/#", "owntracksTopic": "owntracks/+/+"}"#)
        _ = try load(#"{"locationTopic": "homeassistant/#", "homeassistant": {"enabled": false}}"#)
        _ = try load(#"{"owntracksTopic": "ot/#", "owntracksTransitions": false}"#)
        _ = try load(#"{"locationTopic": "geotify/shard/#"}"#)
        // A response prefix ending within a level (`resp-<device>`) takes only the topics
        // whose level starts with it, and a device is never empty.
        _ = try load(#"{"responseTopicPrefix": "resp-"}"#)
        _ = try load(#"{"responseTopicPrefix": "r/resp-", "locationTopic": "r/resp-/#"}"#)
    }

    @Test func theDefaultsAreTheSettingsInitialValues() throws {
        let loaded = try load("{}")
        #expect(loaded == Settings())
        #expect(Settings.key(named: "broker")?.defaultDescription == "\"mqtt://127.0.0.1:1883\"")
        #expect(Settings.key(named: "maximumAccuracy")?.defaultDescription == "500")
        #expect(Settings.key(named: "hysteresis")?.defaultDescription == "max(10 m, 10 % of the fence's radius)")
        #expect(Settings.key(named: "homeassistant.prefix")?.defaultDescription == "\"homeassistant\"")
        #expect(Settings.key(named: "username")?.defaultDescription == "none")
    }

    @Test func everyKeyIsReadFromItsOwnValueAndTheTableHasNoDuplicates() throws {
        #expect(Set(Settings.keys.map(\.name)).count == Settings.keys.count)
        #expect(Set(Settings.keys.compactMap(\.flag?.name)).count == Settings.keys.filter { $0.flag != nil }.count)
        for key in Settings.keys where key.name.contains(".") {
            let parent = String(key.name.split(separator: ".")[0])
            #expect(Settings.key(named: parent)?.kind == .object, "\(key.name) has no object \(parent)")
        }
    }

    @Test(arguments: [
        (#"{"keepAlive": 4}"#, #": keepAlive 4 must be at least 5"#),
        (#"{"maximumTopicDepth": 1}"#, #": maximumTopicDepth 1 must be at least 2"#),
        (#"{"previewTimeout": 0.5}"#, #": previewTimeout 0.5 must be at least 1"#),
        (#"{"statsInterval": -1}"#, #": statsInterval -1 must not be negative"#),
        (#"{"maximumDevices": 1e300}"#, #": maximumDevices 1e+300 must be at most 999999999999999"#),
        (#"{"maximumDevices": 1e15}"#, #": maximumDevices 1000000000000000.0 must be at most 999999999999999"#),
        (#"{"durability": "fsync"}"#, #": "durability" must be one of normal, full, not "fsync""#),
        (#"{"fences": ""}"#, #": "fences" must not be empty (leave it out instead)"#),
        (#"{"lanes": 257}"#, #": lanes 257 is outside 1...256"#),
        (#"{"lanes": 10000000}"#, #": lanes 10000000 is outside 1...256"#),
    ])
    func valuesOutsideTheirRangeAreRefused(text: String, expected: String) {
        #expect(message(text) == expected)
    }

    /// A whole number without an upper bound of its own is taken up to 15 digits.
    @Test func theLargestWholeNumberIsTaken() throws {
        #expect(try load(#"{"maximumDevices": 999999999999999}"#).maximumDevices == 999_999_999_999_999)
    }

    @Test func flagsAreCheckedAsTheFileIsButPathsStayAsGiven() throws {
        var settings = Settings()
        try settings.set(flag: "log-level", to: "debug")
        try settings.set(flag: "state-dir", to: "relative/state")
        #expect(settings.logLevel == .debug)
        #expect(settings.stateDirectory == "relative/state")
        #expect(throws: SettingsError.self) { try settings.set(flag: "log-level", to: "loud") }
        do {
            try settings.set(flag: "log-level", to: "warn")
        } catch {
            #expect(error.message == #"--log-level: "logLevel" must be one of debug, info, warning, error, not "warn" (did you mean "warning"?)"#)
        }
        do {
            try settings.set(flag: "broker", to: "http://x")
        } catch {
            #expect(error.message == #"--broker: unsupported scheme "http" in "http://x"; use mqtt:// or mqtts://"#)
        }
    }

    @Test func theRulesOfTheSettingsAndOfAFenceAreReadAlike() throws {
        for rule in TransitionRule.allCases {
            var global = TransitionRules.none
            var override = FenceRules()
            let value: JSON = switch rule.field {
            case .number, .optionalNumber: .number(42)
            case .flag: .bool(true)
            case .trigger: .string("exit")
            }
            try rule.decode(value, into: &global)
            try rule.decode(value, into: &override)
            #expect(rule.encode(global) == value)
            #expect(rule.encode(override) == value)
            #expect(override.resolved(over: .none) == global)
        }
    }
}
