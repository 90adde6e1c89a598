import Foundation
import Testing
import GeotifyTestSupport

/// The `geotify` executable: help, check, and run as a real process against mosquitto.
@Suite("geotify command line", .serialized)
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
        #expect(result.output.contains("run      run the bridge"))
        #expect(result.output.contains("check    validate a fence file"))
        let run = try runGeotify(["run", "--help"], in: directory)
        #expect(run.status == 0)
        #expect(run.output.contains("--broker URL"))
    }

    @Test func usageErrorsExitTwoWithAPointerToHelp() throws {
        let unknown = try runGeotify(["run", "--brocker", "x"], in: directory)
        #expect(unknown.status == 2)
        #expect(unknown.error == "geotify: unknown option --brocker (see 'geotify run --help')\n")
        let command = try runGeotify(["frobnicate"], in: directory)
        #expect(command.status == 2)
        #expect(command.error == "geotify: unknown command \"frobnicate\" (see 'geotify --help')\n")
        let broker = try runGeotify(["run", "--broker", "http://x"], in: directory)
        #expect(broker.status == 2)
        #expect(broker.error.contains("unsupported scheme \"http\""))
    }

    @Test func checkAcceptsAValidFile() throws {
        let result = try runGeotify(["check", "--fences", "fences.json"], in: directory)
        #expect(result.status == 0)
        #expect(result.output == "fences.json: valid, 1 fence for 1 device\n")
    }

    @Test func checkListsEveryProblemAndExitsOne() throws {
        try #"{"devices": {"a": [{"identifier": "x", "latitude": 95, "longitude": 0, "radius": 0, "eventType": "onEntry"}]}}"#
            .write(to: directory.appendingPathComponent("bad.json"), atomically: true, encoding: .utf8)
        let result = try runGeotify(["check", "--fences", "bad.json"], in: directory)
        #expect(result.status == 1)
        #expect(result.output == """
            warning: bad.json:1: device "a", fence "x": radius 0 m clamped to 1 m (allowed 1...100000 m)
            error: bad.json:1: device "a", fence "x": latitude 95 is outside -90...90
            bad.json: 1 error, not valid

            """)
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
}
