import Foundation
import Testing
import GeotifyTestSupport

/// A disk that fills up under a running bridge, made real with a file size limit
/// (`prlimit --fsize`, the soft limit, which the test can lift again): writes past it
/// fail as on a full disk. The bridge keeps
/// evaluating and publishing, reports the failure, recovers by itself when the limit is
/// lifted, and never leaves a corrupt state database or fence file.
@Suite("Disk full", .serialized, .waiting)
struct DiskFullTests {
    let directory: URL
    let broker: TestBroker
    let observer: TestClient
    let base = Int(Date().timeIntervalSince1970) - 7_200

    init() throws {
        directory = try makeTemporaryDirectory("disk")
        try """
            {"devices": {"alice/phone": [{"identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
              "note": "Welcome home", "eventType": "onEntryAndExit"}]}}
            """.write(to: directory.appendingPathComponent("fences.json"), atomically: true, encoding: .utf8)
        broker = try TestBroker()
        observer = try TestClient(port: broker.port)
        try observer.subscribe("geotify/#")
    }

    var arguments: [String] {
        ["run", "--fences", directory.appendingPathComponent("fences.json").path,
         "--state-dir", directory.appendingPathComponent("state").path, "--broker", broker.url]
    }

    func limited(_ bytes: Int, log: URL) throws -> ChildProcess {
        try ChildProcess(executable: "/usr/bin/prlimit", arguments: ["--fsize=\(bytes):unlimited", "--", geotifyExecutable.path] + arguments, outputFile: log)
    }

    func publish(step: Int) throws {
        let latitude = step % 2 == 1 ? 52.52 : 52.50
        try observer.publish("owntracks/alice/phone", #"{"_type":"location","lat":\#(latitude),"lon":13.405,"acc":5,"tst":\#(base + step)}"#)
    }

    func events() -> [String] {
        observer.messages.filter { $0.topic == "geotify/event/alice/phone" }.map(\.text)
    }

    /// Waits for the bridge's `online`, which it publishes once it has subscribed: a
    /// position published before then would go to nobody, and every count after it would
    /// be off by one. A process started while the whole suite starts may take more than
    /// the usual 10 s to get there; the wait ends as soon as it does.
    func waitUntilOnline() throws {
        try #require(observer.waitForMessage(on: "geotify/status", timeout: 60)?.text == "online")
    }

    func sqlite(_ sql: String) throws -> String {
        try runCommand("sqlite3", [directory.appendingPathComponent("state/state.sqlite").path, sql])
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func theBridgeKeepsPublishingWhileTheDiskIsFullAndRecoversByItself() throws {
        let log = directory.appendingPathComponent("bridge.log")
        let bridge = try limited(160 * 1024, log: log)
        try waitUntilOnline()
        var step = 0
        #expect(waitUntil(timeout: 30) {
            step += 1
            try? publish(step: step)
            return observer.messages.contains { $0.topic == "geotify/error" && $0.text.contains(#""error":"state_write""#) }
        }, "the state database filled the 64 KiB limit")
        let failures = observer.messages.filter { $0.topic == "geotify/error" }.count
        for _ in 0..<4 {
            step += 1
            try publish(step: step)
        }
        #expect(waitUntil { events().count == step - 1 }, "notifications go on while nothing can be saved: every fix after the first crosses")
        #expect(observer.messages.filter { $0.topic == "geotify/error" }.count == failures, "the failure is reported once, not per batch")

        try runCommand("prlimit", ["--pid", "\(bridge.pid)", "--fsize=unlimited:unlimited"])
        step += 1
        try publish(step: step)
        #expect(waitUntil { ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains("the state database can be written again") })
        #expect(waitUntil { events().count == step - 1 })
        let lastBadge = "\(step - 1)"
        #expect(waitUntil { observer.messages.last { $0.topic == "geotify/badge/alice/phone" }?.text == lastBadge })

        bridge.terminate(signal: SIGTERM)
        #expect(bridge.waitForExit(timeout: 20))
        #expect(bridge.exitCode == 0)
        #expect(try sqlite("PRAGMA integrity_check") == "ok")
        #expect(try sqlite("SELECT badge FROM device WHERE id = 'alice/phone'") == lastBadge, "what was decided during the outage was saved after it")
    }

    @Test func aFenceFileWriteThatFailsLeavesTheFileAsItWas() throws {
        let log = directory.appendingPathComponent("bridge.log")
        let fencesBefore = try Data(contentsOf: directory.appendingPathComponent("fences.json"))
        let bridge = try limited(160 * 1024, log: log)
        try waitUntilOnline()
        try runCommand("prlimit", ["--pid", "\(bridge.pid)", "--fsize=100:unlimited"])
        try observer.publish("geotify/cmd/alice/phone", #"{"id":"w","action":"add","fence":{"identifier":"gym","latitude":1,"longitude":2,"radius":50,"eventType":"onEntry"}}"#)
        let reply = observer.waitForMessage(on: "geotify/reply/alice/phone")?.text ?? ""
        #expect(reply.contains(#""ok":false"#))
        #expect(reply.contains(#""code":"io""#))
        #expect(try Data(contentsOf: directory.appendingPathComponent("fences.json")) == fencesBefore)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.contains(".tmp-") }, "no temporary file is left behind")
        bridge.terminate(signal: SIGTERM)
        #expect(bridge.waitForExit(timeout: 20))
    }

    /// 2 KiB: room for the log, not for the database's first 4 KiB page.
    @Test func aStateDirectoryThatCannotBeWrittenIsAClearErrorAtStart() throws {
        let log = directory.appendingPathComponent("bridge.log")
        let bridge = try limited(2_048, log: log)
        #expect(bridge.waitForExit(timeout: 20))
        #expect(bridge.exitCode == 1)
        let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        #expect(output.contains("cannot use the state directory"), "\(output)")
    }
}
