import Foundation
import Testing
import GeotifyTestSupport

/// What a message far larger than the bridge takes costs the running process: a tracker
/// on its own topic sends a 32 MB position to a broker that limits no packet (mosquitto's
/// default), over MQTT 3.1.1, the bridge's default. The bridge took it whole, three times
/// its size in peak memory (a 100 MB one raised it from 17 to 305 MB); read without its
/// payload, its peak stays where it was, and the position is refused as too large.
@Suite("A large message and the bridge's memory", .serialized, .waiting)
struct LargeMessageMemoryTests {
    @Test func aPositionOf32MegabytesLeavesThePeakMemoryWhereItWas() throws {
        let directory = try makeTemporaryDirectory("large-message")
        try CommandLineTests.fences.write(to: directory.appendingPathComponent("fences.json"), atomically: true, encoding: .utf8)
        let broker = try TestBroker()
        let observer = try TestClient(port: broker.port)
        try observer.subscribe("geotify/#")
        let bridge = try ChildProcess(
            executable: geotifyExecutable.path,
            arguments: [
                "run", "--fences", directory.appendingPathComponent("fences.json").path,
                "--state-dir", directory.appendingPathComponent("state").path, "--broker", broker.url,
            ],
            outputFile: directory.appendingPathComponent("run.log"))
        defer {
            bridge.terminate(signal: SIGKILL)
            _ = bridge.waitForExit()
        }
        #expect(observer.waitForMessage(on: "geotify/status")?.text == "online")
        let before = try #require(Self.peakResidentKilobytes(of: bridge.pid))
        try observer.publish("owntracks/alice/phone", bytes: [UInt8](repeating: 0x78, count: 32_000_000))
        let error = observer.waitForMessage(on: "geotify/error", timeout: 30)?.text ?? ""
        #expect(error.contains(#""error":"payload_too_large""#) && error.contains("so it was not read"), "\(error)")
        let after = try #require(Self.peakResidentKilobytes(of: bridge.pid))
        #expect(after - before < 8_000, "peak resident memory \(before) kB before, \(after) kB after")
    }

    /// The process's peak resident memory (`VmHWM`), in kilobytes.
    static func peakResidentKilobytes(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") })
        else { return nil }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
    }
}
