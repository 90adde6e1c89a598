import Foundation
import Testing
import GeotifyTestSupport

/// What a message far larger than the bridge takes costs the running process: a tracker
/// on its own topic sends a 32 MB position to a broker that limits no packet (mosquitto's
/// default), over MQTT 3.1.1, the bridge's default. The bridge took it whole, three times
/// its size in peak memory (a 100 MB one raised it from 17 to 305 MB); read without its
/// payload, its peak stays where it was, and the position is refused as too large. Over
/// TLS too: there the plaintext is cut, not the socket's bytes.
@Suite("A large message and the bridge's memory", .serialized, .waiting)
struct LargeMessageMemoryTests {
    @Test(arguments: [false, true])
    func aPositionOf32MegabytesLeavesThePeakMemoryWhereItWas(tls: Bool) throws {
        try Self.withBridge(tls: tls) { observer, bridge, log in
            #expect(log().contains(tls ? "connected to mqtts://" : "connected to mqtt://"), "\(log())")
            let before = try #require(Self.peakResidentKilobytes(of: bridge.pid))
            try observer.publish("owntracks/alice/phone", bytes: [UInt8](repeating: 0x78, count: 32_000_000))
            let error = observer.waitForMessage(on: "geotify/error", timeout: 30)?.text ?? ""
            #expect(error.contains(#""error":"payload_too_large""#) && error.contains("so it was not read"), "\(error)")
            let after = try #require(Self.peakResidentKilobytes(of: bridge.pid))
            #expect(after - before < 8_000, "peak resident memory \(before) kB before, \(after) kB after")
        }
    }

    /// Many messages within the largest packet the bridge takes but past the payload limit
    /// (256 of 300 000 bytes, 77 MB in all), waiting for the bridge all at once: the
    /// bridge held a burst's messages until its end, up to 256 of them (its peak grew by
    /// 65 MB here, 72 MB on the shipped build); a burst now ends once its messages hold a
    /// megabyte (`ConnectionSupervisor.burstBytes`). Each is refused.
    @Test func aBurstOfLargeMessagesIsNotHeldWhole() throws {
        try Self.withBridge(tls: false) { observer, bridge, _ in
            let before = try #require(Self.peakResidentKilobytes(of: bridge.pid))
            // All of them waiting when the bridge reads: it is stopped while they are sent
            // (the QoS 1 message after them is acknowledged once the broker has queued them
            // all for it), so that it reads them in bursts as full as the socket allows.
            let payload = [UInt8](repeating: 0x78, count: 300_000)
            #expect(kill(bridge.pid, SIGSTOP) == 0)
            for _ in 0..<255 { try observer.publish("owntracks/alice/phone", bytes: payload, qos: 0) }
            try observer.publish("owntracks/alice/phone", bytes: payload, qos: 1)
            #expect(kill(bridge.pid, SIGCONT) == 0)
            let errors = observer.waitForMessages(on: "geotify/error", count: 256, timeout: 60)
            #expect(errors.count == 256 && errors.allSatisfy { $0.text.contains(#""error":"payload_too_large""#) })
            let after = try #require(Self.peakResidentKilobytes(of: bridge.pid))
            #expect(after - before < 8_000, "peak resident memory \(before) kB before, \(after) kB after")
        }
    }

    /// Runs `body` with a `geotify run` process (the command-line tests' fences) online on
    /// a fresh broker, an observer subscribed to `geotify/#` there, and the bridge's log;
    /// over TLS (`tls`) the bridge connects to a second listener of the broker's, a TLS
    /// one, and the observer (the tracker) stays on the plain one. Kills the bridge after.
    static func withBridge(tls: Bool, _ body: (TestClient, ChildProcess, () -> String) throws -> Void) throws {
        let directory = try makeTemporaryDirectory("large-message")
        defer { try? FileManager.default.removeItem(at: directory) }
        try CommandLineTests.fences.write(to: directory.appendingPathComponent("fences.json"), atomically: true, encoding: .utf8)
        var settings: [String: Any] = [:]
        var extraConfig = ""
        if tls {
            let certificates = try TestCertificates(in: directory)
            let port = try freePort()
            extraConfig = "listener \(port) 127.0.0.1\n" + certificates.brokerConfig
            settings = ["broker": "mqtts://127.0.0.1:\(port)", "tls": ["caFile": certificates.caFile]]
        }
        let broker = try TestBroker(extraConfig: extraConfig)
        if !tls { settings["broker"] = broker.url }
        let settingsFile = directory.appendingPathComponent("settings.json")
        try JSONSerialization.data(withJSONObject: settings).write(to: settingsFile)
        let observer = try TestClient(port: broker.port)
        try observer.subscribe("geotify/#")
        let bridge = try ChildProcess(
            executable: geotifyExecutable.path,
            arguments: [
                "run", "--config", settingsFile.path, "--fences", directory.appendingPathComponent("fences.json").path,
                "--state-dir", directory.appendingPathComponent("state").path,
            ],
            outputFile: directory.appendingPathComponent("run.log"))
        defer {
            bridge.terminate(signal: SIGKILL)
            _ = bridge.waitForExit()
        }
        #expect(observer.waitForMessage(on: "geotify/status")?.text == "online")
        try body(observer, bridge) { (try? String(contentsOf: directory.appendingPathComponent("run.log"), encoding: .utf8)) ?? "" }
    }

    /// The process's peak resident memory (`VmHWM`), in kilobytes.
    static func peakResidentKilobytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
}
