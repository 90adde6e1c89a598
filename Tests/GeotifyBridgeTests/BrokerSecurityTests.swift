import Foundation
import GeotifyBridge
import GeotifyMQTT
import GeotifyTestSupport
import Testing

/// The broker security settings: how they are read from a settings file, and how they
/// become `MQTTOptions` (the password from the environment, a file or the settings).
@Suite("Broker security settings")
struct BrokerSecurityTests {
    /// A settings file with `text` in a new directory, loaded; the directory is returned
    /// too, for files the settings refer to.
    func load(_ text: String, files: [String: String] = [:]) throws -> (Settings, String) {
        let directory = try makeTemporaryDirectory("security").path
        for (name, contents) in files {
            try contents.write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
            chmod(directory + "/" + name, 0o600)
        }
        let path = directory + "/geotify.json"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return (try Settings.load(path: path), directory)
    }

    /// The error message loading `text` gives, after the file name.
    func message(_ text: String) -> String? {
        do {
            _ = try load(text)
            return nil
        } catch let error as SettingsError {
            return error.message.components(separatedBy: "geotify.json").last
        } catch {
            return "\(error)"
        }
    }

    /// The options `settings` make, with `environment` as the process environment.
    func options(_ settings: Settings, environment: [String: String] = [:]) throws -> (MQTTOptions, [String]) {
        var options = MQTTOptions(clientID: "geotify")
        let warnings = try settings.security.configure(&options, broker: settings.broker, environment: environment)
        return (options, warnings)
    }

    @Test func defaultsAreNoCredentialsVersion311AndNoTLS() throws {
        let (settings, _) = try load("{}")
        #expect(settings.security == BrokerSecurity())
        let (options, warnings) = try options(settings)
        #expect(options.username == nil && options.password == nil && options.tls == nil)
        #expect(options.protocolVersion == .v311)
        #expect(warnings.isEmpty)
    }

    @Test func tlsFilesAreReadRelativeToTheSettingsFileAndMqttsTurnsTLSOn() throws {
        let elsewhere = try makeTemporaryDirectory("security-elsewhere").appendingPathComponent("client.crt").path
        try "certificate".write(toFile: elsewhere, atomically: true, encoding: .utf8)
        let (settings, directory) = try load(#"""
            {"broker": "mqtts://broker.example:8883", "protocol": "5",
             "tls": {"caFile": "ca.crt", "certFile": "\#(elsewhere)", "keyFile": "client.key"}}
            """#, files: ["ca.crt": "authorities", "client.key": "key"])
        #expect(settings.broker.tls)
        let (options, warnings) = try options(settings)
        #expect(options.protocolVersion == .v5)
        #expect(options.tls == MQTTTLS(
            caFile: directory + "/ca.crt", certFile: elsewhere, keyFile: directory + "/client.key"))
        #expect(options.tls?.insecure == false, "verification is on by default")
        #expect(warnings.isEmpty)
    }

    /// libmosquitto was given the TLS files unchecked: it opens each to see that it can,
    /// so a FIFO blocked the start (until a SIGTERM ended it 5 s later), and a missing
    /// file was refused only as "Invalid function arguments provided" naming every file.
    /// Each is now read as every file an operator names is, and refused naming its key
    /// and path, by `geotify check` as by `geotify run`.
    @Test func aTLSFileThatCannotBeUsedIsRefusedNamingItsKeyAndPath() throws {
        let (plain, directory) = try load("{}", files: ["ca.crt": "authorities", "client.crt": "certificate", "client.key": "key"])
        #expect(plain.security.tls == nil)
        let fifo = directory + "/fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        try FileManager.default.createDirectory(atPath: directory + "/certificates", withIntermediateDirectories: false)
        let cases: [(tls: String, message: String)] = [
            (#""caFile": "gone.crt""#, #"cannot read the broker TLS file "tls.caFile" \#(directory)/gone.crt: no such file"#),
            (#""caFile": "fifo""#, #"cannot read the broker TLS file "tls.caFile" \#(fifo): read \#(fifo): not a regular file (a FIFO); only regular files are read"#),
            (#""caFile": "/dev/zero""#, #"cannot read the broker TLS file "tls.caFile" /dev/zero: read /dev/zero: not a regular file (a character device); only regular files are read"#),
            (#""caFile": "ca.crt", "certFile": "client.crt", "keyFile": "fifo""#, #"cannot read the broker TLS file "tls.keyFile" \#(fifo): read \#(fifo): not a regular file (a FIFO); only regular files are read"#),
            (#""certFile": "certificates", "keyFile": "client.key""#, #"cannot read the broker TLS file "tls.certFile" \#(directory)/certificates: read \#(directory)/certificates: not a regular file (a directory); only regular files are read"#),
            (#""caPath": "gone""#, #"cannot read the broker TLS directory "tls.caPath" \#(directory)/gone: no such directory"#),
            (#""caPath": "fifo""#, #"cannot read the broker TLS directory "tls.caPath" \#(fifo): not a directory"#),
        ]
        for (tls, message) in cases {
            let path = directory + "/geotify.json"
            try #"{"broker": "mqtts://127.0.0.1", "tls": {\#(tls)}}"#.write(toFile: path, atomically: true, encoding: .utf8)
            let settings = try Settings.load(path: path)
            #expect {
                _ = try options(settings)
            } throws: { error in
                (error as? SettingsError)?.message == message
            }
        }
        let path = directory + "/geotify.json"
        try #"{"broker": "mqtts://127.0.0.1", "tls": {"caFile": "ca.crt", "caPath": "certificates", "certFile": "client.crt", "keyFile": "client.key"}}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try options(try Settings.load(path: path)).0.tls?.caPath == directory + "/certificates")
    }

    @Test func mqttsWithoutATLSObjectUsesTheSystemCAs() throws {
        let (settings, _) = try load(#"{"broker": "mqtts://broker.example"}"#)
        #expect(try options(settings).0.tls == MQTTTLS())
    }

    @Test func insecureTLSWarns() throws {
        let (settings, _) = try load(#"{"broker": "mqtts://127.0.0.1", "tls": {"insecure": true}}"#)
        let (options, warnings) = try options(settings)
        #expect(options.tls?.insecure == true)
        #expect(warnings.contains { $0.contains("tls.insecure") })
    }

    @Test func aTLSObjectWithAPlainURLIsRefusedAtStart() throws {
        let (settings, _) = try load(#"{"broker": "mqtt://127.0.0.1", "tls": {"caFile": "ca.crt"}}"#)
        #expect {
            _ = try options(settings)
        } throws: { error in
            (error as? SettingsError)?.message.contains("use an mqtts:// URL") == true
        }
    }

    @Test func thePasswordComesFromTheEnvironmentThenTheFileThenTheSettings() throws {
        let (fromFile, _) = try load(
            #"{"username": "geotify", "passwordFile": "secret"}"#, files: ["secret": "from-file\n"])
        #expect(try options(fromFile).0.password == "from-file", "one trailing line break is not part of it")
        #expect(try options(fromFile, environment: ["GEOTIFY_MQTT_PASSWORD": "from-env"]).0.password == "from-env")
        #expect(try options(fromFile, environment: ["GEOTIFY_MQTT_PASSWORD": ""]).0.password == "from-file")
        #expect(try options(fromFile).1.isEmpty)
        let (marked, _) = try load(
            #"{"username": "geotify", "passwordFile": "secret"}"#, files: ["secret": "\u{FEFF}from-file\n"])
        #expect(try options(marked).0.password == "from-file", "a leading byte order mark is not part of it")

        let (inline, _) = try load(#"{"username": "geotify", "password": "inline"}"#)
        let (options, warnings) = try options(inline)
        #expect(options.username == "geotify" && options.password == "inline")
        #expect(warnings.contains { $0.contains("written in the settings file") })
        #expect(try self.options(inline, environment: ["GEOTIFY_MQTT_PASSWORD": "from-env"]).0.password == "from-env")
    }

    @Test func aPasswordSentInTheClearToAnotherHostWarns() throws {
        let (settings, _) = try load(#"{"broker": "mqtt://broker.example", "username": "geotify"}"#)
        let (_, warnings) = try options(settings, environment: ["GEOTIFY_MQTT_PASSWORD": "secret"])
        #expect(warnings.contains { $0.contains("unencrypted") })
    }

    @Test func passwordProblemsGetSpecificErrors() throws {
        let (noUser, _) = try load("{}")
        #expect {
            _ = try options(noUser, environment: ["GEOTIFY_MQTT_PASSWORD": "secret"])
        } throws: { error in
            (error as? SettingsError)?.message.contains("no \"username\"") == true
        }
        let (missing, _) = try load(#"{"username": "geotify", "passwordFile": "/nonexistent/secret"}"#)
        #expect {
            _ = try options(missing)
        } throws: { error in
            (error as? SettingsError)?.message == "cannot read the broker password file /nonexistent/secret: no such file"
        }
        let (device, _) = try load(#"{"username": "geotify", "passwordFile": "/dev/null"}"#)
        #expect {
            _ = try options(device)
        } throws: { error in
            (error as? SettingsError)?.message == "cannot read the broker password file /dev/null: read /dev/null: not a regular file (a character device); only regular files are read"
        }
        let (empty, _) = try load(#"{"username": "geotify", "passwordFile": "secret"}"#, files: ["secret": "\n"])
        #expect {
            _ = try options(empty)
        } throws: { error in
            (error as? SettingsError)?.message.hasSuffix("is empty") == true
        }
        let (twoLines, _) = try load(#"{"username": "geotify", "passwordFile": "secret"}"#, files: ["secret": "a\nb\n"])
        #expect {
            _ = try options(twoLines)
        } throws: { error in
            (error as? SettingsError)?.message.contains("more than one line") == true
        }
    }

    @Test func aPasswordFileEveryoneCanReadWarns() throws {
        let (settings, directory) = try load(
            #"{"username": "geotify", "passwordFile": "secret"}"#, files: ["secret": "s3cret"])
        chmod(directory + "/secret", 0o644)
        #expect(try options(settings).1.contains { $0.contains("readable by every user") })
    }

    @Test(arguments: [
        (#"{"protocol": "4"}"#, #": "protocol" must be one of 3.1.1, 5, not "4""#),
        (#"{"protocol": 5}"#, #": "protocol" must be a string, not a number"#),
        (#"{"username": ""}"#, #": "username" must not be empty (leave it out instead)"#),
        (#"{"password": "a", "passwordFile": "b"}"#, #": give either "password" or "passwordFile", not both"#),
        (#"{"tls": true}"#, #": "tls" must be an object with caFile, caPath, certFile, keyFile, insecure, not a Boolean"#),
        (#"{"tls": {"cafile": "x"}}"#, #": unknown key "tls.cafile" (did you mean "tls.caFile"?)"#),
        (#"{"tls": {"insecure": "yes"}}"#, #": "tls.insecure" must be true or false, not a string"#),
        (#"{"tls": {"certFile": "c.crt"}}"#, #": "tls.certFile" and "tls.keyFile" must be given together"#),
    ])
    func badValuesAreRefusedNamingTheKey(text: String, expected: String) {
        #expect(message(text) == expected)
    }

    @Test func aPasswordFileWithoutAUserNameIsRefused() throws {
        let (settings, _) = try load(#"{"passwordFile": "secret"}"#, files: ["secret": "s3cret\n"])
        #expect {
            _ = try options(settings)
        } throws: { error in
            (error as? SettingsError)?.message.contains("no \"username\"") == true
        }
    }

    @Test func aPasswordFileWithAWindowsLineBreakKeepsItsLastCharacter() throws {
        let (settings, _) = try load(#"{"username": "geotify", "passwordFile": "secret"}"#, files: ["secret": "s3cret\r\n"])
        #expect(try options(settings).0.password == "s3cret")
    }

    @Test func onlyAPasswordFileOthersMayReadWarns() throws {
        let (settings, directory) = try load(
            #"{"username": "geotify", "passwordFile": "secret"}"#, files: ["secret": "s3cret"])
        chmod(directory + "/secret", 0o604)
        #expect(try options(settings).1.contains { $0.contains("readable by every user") })
        chmod(directory + "/secret", 0o640)
        #expect(try options(settings).1.isEmpty, "the group (the service's own) may read it")
    }

    @Test func aPasswordToAnyLoopbackAddressDoesNotWarn() throws {
        let (settings, _) = try load(#"{"broker": "mqtt://127.0.0.2", "username": "geotify"}"#)
        #expect(try options(settings, environment: ["GEOTIFY_MQTT_PASSWORD": "secret"]).1.isEmpty)
    }
}
