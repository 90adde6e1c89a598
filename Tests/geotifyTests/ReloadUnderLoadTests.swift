import Foundation
import GeotifyTestSupport
import Testing

/// A large fence file reloaded while positions flow: the reload (read, parse, validate,
/// revisions saved) runs off the network thread and outside the lock lanes read the
/// book under, so positions are evaluated and notifications published all through it,
/// and the broker connection's keep-alive holds.
@Suite("Reloading 100 000 fences while positions flow", .serialized, .waiting)
struct ReloadUnderLoadTests {
    @Test(.longWaiting) func positionsAreEvaluatedAllThroughTheReload() throws {
        let directory = try makeTemporaryDirectory("reload")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fencesURL = directory.appendingPathComponent("fences.json")
        func fenceFile(note: String) -> String {
            var devices: [String] = []
            for device in 0..<10_000 {
                let latitude = 48 + Double(device / 100) * 0.05
                let longitude = 2 + Double(device % 100) * 0.05
                let fences = (0..<10).map { fence in
                    #"{"identifier":"f\#(fence)","latitude":\#(latitude + Double(fence) * 0.002),"longitude":\#(longitude),"radius":100,"note":"\#(fence == 0 ? note : "")","eventType":"onEntryAndExit"}"#
                }
                devices.append(#""u\#(device)/phone":[\#(fences.joined(separator: ","))]"#)
            }
            return #"{"devices":{\#(devices.joined(separator: ","))}}"#
        }
        try fenceFile(note: "before").write(to: fencesURL, atomically: true, encoding: .utf8)
        let broker = try TestBroker()
        let observer = try TestClient(port: broker.port)
        try observer.subscribe("reload/event/#")
        try observer.subscribe("reload/status")
        // Home Assistant off: announcing 10 000 devices' 100 000 entities is the
        // announcer's work, not the reload's, and cost three quarters of this test's CPU.
        let bridge = try BridgeProcess(name: "reload", port: broker.port, fences: fencesURL, directory: directory, extra: #""keepAlive": 5, "homeassistant": {"enabled": false}"#)
        try bridge.start()
        defer { bridge.kill(SIGTERM) }
        #expect(observer.waitForMessage(on: "reload/status", timeout: 60)?.text == "online")

        // One position after another, each waiting for the notification it causes
        // (in and out of u0/phone's fence f0), timed from publish to notification.
        let base = Int(Date().timeIntervalSince1970) - 600
        var latencies: [Double] = []
        var duringReload = 0
        var step = 0
        func roundTrip() throws {
            step += 1
            let latitude = step % 2 == 1 ? 48.0 : 47.99
            let sent = Date()
            try observer.publish("owntracks/u0/phone", #"{"_type":"location","lat":\#(latitude),"lon":2,"acc":5,"tst":\#(base + step)}"#)
            let expected = step - 1
            #expect(observer.waitForMessages(on: "reload/event/u0/phone", count: expected, timeout: 30).count >= expected)
            latencies.append(Date().timeIntervalSince(sent))
        }
        for _ in 0..<20 { try roundTrip() }
        let reloadsBefore = bridge.log.components(separatedBy: "fences reloaded").count
        try fenceFile(note: "after").write(to: fencesURL, atomically: true, encoding: .utf8)
        bridge.signal(SIGHUP)
        while bridge.log.components(separatedBy: "fences reloaded").count == reloadsBefore {
            try roundTrip()
            duringReload += 1
            try #require(duringReload < 100_000, "the reload never finished")
        }
        for _ in 0..<20 { try roundTrip() }
        #expect(duringReload > 0, "notifications kept coming while the 100 000 fences were read and validated")
        #expect(!bridge.log.contains("lost the connection"), "the keep-alive held")
        #expect(observer.waitForMessages(on: "reload/event/u0/phone", count: step - 1).last?.text.contains(#""note":"after""#) == true,
                "the new fences are in force")
        let sorted = latencies.sorted()
        print("reload under load: \(duringReload) round trips during the reload; publish→notification p50 \(Int(sorted[sorted.count / 2] * 1000)) ms, p99 \(Int(sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1000)) ms, max \(Int(sorted.last! * 1000)) ms (\(sorted.count) round trips)")
    }
}
