import Foundation
import Testing
import GeotifyTestSupport

/// The `geotify` executable: help, check, and run as a real process against mosquitto.
@Suite("geotify command line", .serialized, .waiting)
struct CommandLineTests {
    let directory: URL

    init() throws {
        directory = try makeTemporaryDirectory("cli")
        try Self.fences.write(to: directory.appendingPathComponent("fences.json"), atomically: true, encoding: .utf8)
    }

    static let fences = """
        {"devices": {"alice/phone": [{"identifier": "home", "latitude": 52.52, "longitude": 13.405,
          "radius": 100, "note": "Welcome home", "eventType": "onEntryAndExit"}]}}
        """

    @Test func helpListsTheCommands() throws {
        let result = try runGeotify(["--help"], in: directory)
        #expect(result.status == 0)
        #expect(result.output.contains("  run       run the bridge\n"))
        #expect(result.output.contains("  check     validate the settings file and the fence file\n"))
        #expect(result.output.contains("  version   print the version"))
        let run = try runGeotify(["run", "--help"], in: directory)
        #expect(run.status == 0)
        #expect(run.output.contains("--broker URL"))
    }

    @Test func usageErrorsExitTwoWithAPointerToHelp() throws {
        let unknown = try runGeotify(["run", "--brocker", "x"], in: directory)
        #expect(unknown.status == 2)
        #expect(unknown.error == "geotify: unknown option --brocker (did you mean --broker?) (see 'geotify run --help')\n")
        let command = try runGeotify(["frobnicate"], in: directory)
        #expect(command.status == 2)
        #expect(command.error == "geotify: unknown command \"frobnicate\" (see 'geotify --help')\n")
        let misspelt = try runGeotify(["fence", "list"], in: directory)
        #expect(misspelt.status == 2)
        #expect(misspelt.error == "geotify: unknown command \"fence\" (did you mean \"fences\"?) (see 'geotify --help')\n")
        let broker = try runGeotify(["run", "--broker", "http://x"], in: directory)
        #expect(broker.status == 2)
        #expect(broker.error.contains("unsupported scheme \"http\""))
    }

    @Test func checkAcceptsAValidFile() throws {
        let result = try runGeotify(["check", "--fences", "fences.json"], in: directory)
        #expect(result.status == 0)
        #expect(result.output == """
            settings: the defaults (no --config, and no config/geotify.json here)
            fences.json: valid, 1 fence for 1 device

            """)
    }

    @Test func checkListsEveryProblemAndExitsOne() throws {
        try #"{"devices": {"a": [{"identifier": "x", "latitude": 95, "longitude": 0, "radius": 0, "eventType": "onEntry"}]}}"#
            .write(to: directory.appendingPathComponent("bad.json"), atomically: true, encoding: .utf8)
        let result = try runGeotify(["check", "--fences", "bad.json"], in: directory)
        #expect(result.status == 1)
        #expect(result.output == """
            settings: the defaults (no --config, and no config/geotify.json here)
            warning: bad.json:1: device "a", fence "x": radius 0 m clamped to 1 m (allowed 1...100000 m)
            error: bad.json:1: device "a", fence "x": latitude 95 is outside -90...90
            bad.json: 1 error, not valid

            """)
    }

    @Test func checkValidatesTheSettingsFileToo() throws {
        try #"{"fences": "fences.json", "statsIntervall": 5}"#.write(to: directory.appendingPathComponent("typo.json"), atomically: true, encoding: .utf8)
        let typo = try runGeotify(["check", "--config", "typo.json"], in: directory)
        #expect(typo.status == 1)
        #expect(typo.output == """
            error: typo.json: unknown key "statsIntervall" (did you mean "statsInterval"?)
            typo.json: not valid

            """)
        try #"{"fences": "fences.json", "username": "geotify", "passwordFile": "missing"}"#
            .write(to: directory.appendingPathComponent("password.json"), atomically: true, encoding: .utf8)
        let password = try runGeotify(["check", "--config", "password.json"], in: directory)
        #expect(password.status == 1)
        #expect(password.output.hasPrefix("error: password.json: cannot read the broker password file missing: no such file\n"))
        try #"{"fences": "fences.json", "notify": {"targets": [{"name": "x", "type": "carrier-pigeon"}]}}"#
            .write(to: directory.appendingPathComponent("notify.json"), atomically: true, encoding: .utf8)
        let notify = try runGeotify(["check", "--config", "notify.json"], in: directory)
        #expect(notify.status == 1)
        #expect(notify.output.hasPrefix("error: notify.json: notify.targets[0] (\"x\").type must be one of"))
        try #"{"fences": "fences.json", "logLevel": "debug"}"#.write(to: directory.appendingPathComponent("good.json"), atomically: true, encoding: .utf8)
        let good = try runGeotify(["check", "--config", "good.json"], in: directory)
        #expect(good.status == 0)
        #expect(good.output == "good.json: valid settings\nfences.json: valid, 1 fence for 1 device\n")
    }

    /// `run` refused a bad OwnTracks keys file while `check` called the settings valid.
    @Test func checkReadsTheOwnTracksKeysFileAsRunDoes() throws {
        try "alice/phone\n".write(to: directory.appendingPathComponent("bad-keys"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("keys-dir"), withIntermediateDirectories: true)
        try "alice/phone s3cr1t\n".write(to: directory.appendingPathComponent("good-keys"), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: directory.appendingPathComponent("good-keys").path)
        for (keys, expected) in [
            ("bad-keys", "error: bad-keys:1: a line is a device name, one space, then its secret; this one has no space\nkeys.json: not valid\n"),
            ("keys-dir", "error: cannot read the OwnTracks keys file keys-dir: read keys-dir: not a regular file (a directory)"),
            ("missing-keys", "error: cannot read the OwnTracks keys file missing-keys: no such file\nkeys.json: not valid\n"),
        ] {
            try #"{"fences": "fences.json", "owntracksKeysFile": "\#(keys)"}"#
                .write(to: directory.appendingPathComponent("keys.json"), atomically: true, encoding: .utf8)
            let result = try runGeotify(["check", "--config", "keys.json"], in: directory)
            #expect(result.status == 1, "\(keys)")
            #expect(result.output.hasPrefix(expected), "\(result.output)")
        }
        try #"{"fences": "fences.json", "owntracksKeysFile": "good-keys"}"#
            .write(to: directory.appendingPathComponent("keys.json"), atomically: true, encoding: .utf8)
        let good = try runGeotify(["check", "--config", "keys.json"], in: directory)
        #expect(good.status == 0)
        #expect(good.output == "keys.json: valid settings\nfences.json: valid, 1 fence for 1 device\n")
    }

    @Test func aMissingFenceFileSaysWhatToPass() throws {
        let empty = try makeTemporaryDirectory("outside")
        let outside = try runGeotify(["check"], in: empty)
        #expect(outside.status == 1)
        #expect(outside.output.contains("""
            error: config/fences.json: no such file
            hint: pass --fences FILE, or --config FILE with a settings file that names it ("fences"); there is no config/geotify.json here

            """))
        try #"{"fences": "gone.json"}"#.write(to: empty.appendingPathComponent("settings.json"), atomically: true, encoding: .utf8)
        let named = try runGeotify(["check", "--config", "settings.json"], in: empty)
        #expect(named.output.contains(#"hint: settings.json names it ("fences", relative to the settings file); pass --fences FILE for another"#))
        let given = try runGeotify(["check", "--fences", "gone.json"], in: empty)
        #expect(!given.output.contains("hint:"))
        let run = try runGeotify(["run", "--broker", "mqtt://127.0.0.1:1", "--state-dir", "state"], in: empty)
        #expect(run.status == 1)
        #expect(run.error.contains("hint: pass --fences FILE, or --config FILE"))
    }

    /// libmosquitto opens the TLS files it is given to check them, so a CA file that was
    /// a FIFO nobody writes blocked the start (a SIGTERM ended it 5 s later, without a
    /// clean stop). The TLS files are now read as every file an operator names is, before
    /// libmosquitto sees them: `check` and `run` both refuse a FIFO at once, naming the
    /// key and the path.
    @Test func aTLSFileThatIsAFIFOIsRefusedAtOnceByCheckAndRun() throws {
        let fifo = directory.appendingPathComponent("ca.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let settings = directory.appendingPathComponent("fifo.json")
        try #"{"fences": "fences.json", "stateDir": "state-fifo", "broker": "mqtts://127.0.0.1:1", "tls": {"caFile": "ca.fifo"}}"#
            .write(to: settings, atomically: true, encoding: .utf8)
        let refusal = #"cannot read the broker TLS file "tls.caFile" \#(fifo): read \#(fifo): not a regular file (a FIFO); only regular files are read"#
        let check = try runGeotify(["check", "--config", settings.path], in: directory)
        #expect(check.status == 1)
        #expect(check.output.contains("error: \(settings.path): \(refusal)\n"), "\(check.output)")
        let log = directory.appendingPathComponent("fifo.log")
        let run = try ChildProcess(executable: geotifyExecutable.path, arguments: ["run", "--config", settings.path], outputFile: log)
        let text = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        #expect(run.waitForExit(timeout: 30), "run ends without blocking on the FIFO: \(text())")
        #expect(run.exitCode == 1)
        #expect(text().contains(refusal), "\(text())")
    }

    /// `geotify run` raises its soft limit on open files to its hard limit first: started
    /// with 256 of 4 096 (an ordinary user's or a systemd service's soft limit is 1 024),
    /// it runs with 4 096, room for the web console's connections.
    @Test func runRaisesItsLimitOfOpenFilesToTheHardLimit() throws {
        let settings = directory.appendingPathComponent("limits.json")
        try #"{"fences": "fences.json", "stateDir": "state-limits", "broker": "mqtt://127.0.0.1:1", "logLevel": "debug"}"#
            .write(to: settings, atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("limits.log")
        // prlimit sets the limits on itself and then becomes geotify (exec), keeping its pid.
        let child = try ChildProcess(
            executable: "/usr/bin/prlimit", arguments: ["--nofile=256:4096", geotifyExecutable.path, "run", "--config", settings.path],
            outputFile: log)
        defer {
            child.terminate(signal: SIGTERM)
            _ = child.waitForExit()
        }
        let text = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        #expect(waitUntil { text().contains("started:") }, "\(text())")
        let limits = try #require(kernelFileText("/proc/\(child.pid)/limits"))
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }.map { $0.split(separator: " ").map(String.init) }
        #expect(line?.suffix(3) == ["4096", "4096", "files"], "\(limits)")
        #expect(text().contains("raised the limit of open files from 256 to 4096 (the hard limit)"), "\(text())")
    }

    @Test func anUnusableStateDirectoryGivesTheSystemsReason() throws {
        try "not a directory".write(to: directory.appendingPathComponent("file"), atomically: true, encoding: .utf8)
        let result = try runGeotify(
            ["run", "--fences", "fences.json", "--state-dir", "file/state", "--broker", "mqtt://127.0.0.1:1"], in: directory)
        #expect(result.status == 1)
        #expect(result.error.contains("use state directory file/state: mkdir file/state: Not a directory"))
    }

    @Test func runRefusesAnInvalidFenceFileAndExitsNonZero() throws {
        try "{".write(to: directory.appendingPathComponent("bad.json"), atomically: true, encoding: .utf8)
        let result = try runGeotify(
            ["run", "--fences", "bad.json", "--state-dir", "state", "--broker", "mqtt://127.0.0.1:1"], in: directory)
        #expect(result.status == 1)
        #expect(result.error.contains("the fence file bad.json is not valid:"))
        #expect(result.error.contains("bad.json:1: not valid JSON: unexpected end of text, expected a member name in double quotes (column 2)"))
    }

    @Test func runPublishesStopsOnSIGTERMAndRestartsWithItsState() throws {
        let broker = try TestBroker()
        let observer = try TestClient(port: broker.port)
        try observer.subscribe("geotify/#")
        let log = directory.appendingPathComponent("run.log")
        let arguments = [
            "run", "--fences", directory.appendingPathComponent("fences.json").path,
            "--state-dir", directory.appendingPathComponent("state").path, "--broker", broker.url,
        ]

        let base = Int(Date().timeIntervalSince1970) - 3_600
        let first = try ChildProcess(executable: geotifyExecutable.path, arguments: arguments, outputFile: log)
        #expect(observer.waitForMessage(on: "geotify/status")?.text == "online")
        try observer.publish("owntracks/alice/phone", #"{"_type":"location","lat":52.50,"lon":13.405,"tst":\#(base)}"#)
        try observer.publish("owntracks/alice/phone", #"{"_type":"location","lat":52.52,"lon":13.405,"tst":\#(base + 60)}"#)
        #expect(observer.waitForMessage(on: "geotify/event/alice/phone")?.text.contains(#""event":"enter""#) == true)
        first.terminate(signal: SIGTERM)
        #expect(first.waitForExit(timeout: 20))
        #expect(first.exitCode == 0)
        #expect(observer.waitForMessages(on: "geotify/status", count: 2).map(\.text) == ["online", "offline"])
        #expect(((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("received SIGTERM, stopping"))

        observer.clear()
        let second = try ChildProcess(executable: geotifyExecutable.path, arguments: arguments, outputFile: log)
        #expect(observer.waitForMessage(on: "geotify/status")?.text == "online")
        try observer.publish("owntracks/alice/phone", #"{"_type":"location","lat":52.52,"lon":13.405,"tst":\#(base + 120)}"#)
        try observer.publish("owntracks/alice/phone", #"{"_type":"location","lat":52.50,"lon":13.405,"tst":\#(base + 180)}"#)
        let events = observer.waitForMessages(on: "geotify/event/alice/phone", count: 1)
        #expect(events.count == 1)
        #expect(events.map(\.text).allSatisfy { $0.contains(#""event":"exit""#) && $0.contains(#""badge":2"#) })
        second.terminate(signal: SIGINT)
        #expect(second.waitForExit(timeout: 20))
        #expect(second.exitCode == 0)
        let late = try TestClient(port: broker.port)
        try late.subscribe("geotify/badge/alice/phone")
        #expect(late.waitForMessage(on: "geotify/badge/alice/phone")?.text == "2")
    }

    /// `run --reset-state` sets a state database the bridge would refuse aside (renamed,
    /// not deleted) and starts with empty state, saying which file it set aside; the
    /// flag reaches the bridge from the command line, not only from the settings.
    @Test func resetStateSetsARefusedStateDatabaseAsideAndStarts() throws {
        let state = directory.appendingPathComponent("state-reset")
        try FileManager.default.createDirectory(at: state, withIntermediateDirectories: false)
        try Data("not a state database, written by hand".utf8).write(to: state.appendingPathComponent("state.sqlite"))
        let settings = directory.appendingPathComponent("reset.json")
        try #"{"fences": "fences.json", "stateDir": "state-reset", "broker": "mqtt://127.0.0.1:1"}"#
            .write(to: settings, atomically: true, encoding: .utf8)
        let log = directory.appendingPathComponent("reset.log")
        let run = try ChildProcess(executable: geotifyExecutable.path, arguments: ["run", "--config", settings.path, "--reset-state"], outputFile: log)
        let text = { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
        #expect(waitUntil(timeout: 30) { text().contains("--reset-state: set ") && text().contains("/state-reset/state-reset-") }, "\(text())")
        run.stop()
        #expect(run.exitCode == 0, "a clean stop after the start: \(text())")
        let setAside = try FileManager.default.contentsOfDirectory(atPath: state.path).filter { $0.hasPrefix("state-reset-") && $0.hasSuffix(".sqlite") }
        #expect(setAside.count == 1, "\(setAside)")
        #expect(try setAside.first.map { try String(contentsOf: state.appendingPathComponent($0), encoding: .utf8) } == "not a state database, written by hand")
    }

    /// Without `--config`, the settings file is the one `GEOTIFY_CONFIG` names, else
    /// `config/geotify.json` when it exists; the variable set but empty (as `docker run -e
    /// GEOTIFY_CONFIG=` or a Compose file's empty value leaves it) names none, so the
    /// default file is read rather than a file named "".
    @Test func anEmptyConfigVariableNamesNoSettingsFile() throws {
        let config = directory.appendingPathComponent("config")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: false)
        try #"{"fences": "../fences.json"}"#.write(to: config.appendingPathComponent("geotify.json"), atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["GEOTIFY_CONFIG"] = ""
        let empty = try CompletedProcess.run(geotifyExecutable.path, ["check"], in: directory, environment: environment)
        #expect(empty.status == 0, "\(empty.output)\(empty.error)")
        #expect(empty.output.hasPrefix("config/geotify.json: valid settings\n"), "\(empty.output)")
        environment["GEOTIFY_CONFIG"] = "elsewhere.json"
        let named = try CompletedProcess.run(geotifyExecutable.path, ["check"], in: directory, environment: environment)
        #expect(named.status == 1)
        #expect(named.output.contains("elsewhere.json: no such file"), "\(named.output)")
    }
}
