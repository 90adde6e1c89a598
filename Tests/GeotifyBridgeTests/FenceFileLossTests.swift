import Foundation
@testable import GeotifyBridge
import GeotifyTestSupport
import GeotifyTime
import Testing

/// A fence file deleted under a running bridge, through a real mosquitto, on a clock the
/// test moves: the next look at the file reports it (log, `geotify/error`, counter),
/// commands that write are refused with `invalid_file` and create no file, the fences in
/// force keep working, and once the file is back commands work again.
@Suite("A fence file lost under a running bridge", .serialized, .waiting)
struct FenceFileLossTests {
    /// Sends a command for `device` and returns its reply (the one with its id).
    func send(_ harness: BridgeHarness, _ body: String, device: String = "alice/phone") throws -> [String: Any] {
        let id = UUID().uuidString
        try harness.observer.publish("geotify/cmd/\(device)", #"{"id":"\#(id)",\#(body.dropFirst())"#)
        let reply = harness.observer.waitForMessage(on: "geotify/reply/\(device)") { $0.text.contains(id) }
        guard let reply, let object = try JSONSerialization.jsonObject(with: Data(reply.payload)) as? [String: Any] else {
            throw TestSupportError("no reply to \(body)")
        }
        return object
    }

    func code(_ reply: [String: Any]) -> String? {
        (reply["error"] as? [String: Any])?["code"] as? String
    }

    /// The `geotify/error` messages seen so far, parsed.
    func errors(_ harness: BridgeHarness) -> [[String: Any]] {
        harness.observer.messages.filter { $0.topic == "geotify/error" }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
        }
    }

    static let gym = #"{"action":"add","fence":{"identifier":"gym","latitude":52.5,"longitude":13.41,"radius":50,"eventType":"onEntry"}}"#

    @Test func aDeletedFileIsReportedAtOnceRefusesWritesAndKeepsTheFencesInForce() throws {
        let clock = ManualScheduler(now: Date().timeIntervalSince1970)
        let harness = try BridgeHarness(clock: clock)
        let path = harness.fencesURL.path
        try FileManager.default.removeItem(at: harness.fencesURL)
        // A command that only reads goes through: the bridge has not looked yet.
        #expect(try send(harness, #"{"action":"list"}"#)["ok"] as? Bool == true)
        #expect(errors(harness).isEmpty, "nothing reported before the file is looked at")

        clock.advance(by: 1.1)
        let report = harness.observer.waitForMessage(on: "geotify/error")
        let expected = "the fence file \(path) is missing; the fences in force stay, and commands that change fences are refused until it is back"
        let object = try report.flatMap { try JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any] }
        #expect(object?["error"] as? String == "fence_file")
        #expect(object?["message"] as? String == expected)
        #expect(harness.logLines.all.contains { $0.contains(expected) }, "\(harness.logLines.all.suffix(10))")
        #expect(harness.bridge?.counters.value(.errors(.fenceFile)) == 1)

        let refused = try send(harness, Self.gym)
        #expect(refused["ok"] as? Bool == false)
        #expect(code(refused) == "invalid_file")
        #expect((refused["error"] as? [String: Any])?["message"] as? String
            == "the fence file \(path) is missing; no change is written until it is back")
        #expect(!FileManager.default.fileExists(atPath: path), "no file holding only the new fence")
        clock.advance(by: 1.1)
        _ = try send(harness, #"{"action":"list"}"#)
        #expect(errors(harness).count == 1, "reported once, not every second")

        // Another device's fence still triggers.
        try harness.ownTracks("van/7", 48.20, 11.5755, tst: 1)
        try harness.ownTracks("van/7", 48.1374, 11.5755, tst: 2)
        let entry = harness.events("van/7", count: 1).first
        #expect(entry?["event"] as? String == "enter")
        #expect(entry?["fence"] as? String == "depot")
        #expect(harness.bridge?.fenceBook.fences(of: "alice/phone").map(\.identifier) == ["home", "office"])

        // The file is back: the next look says so, and commands work on it again.
        try BridgeHarness.fences.write(to: harness.fencesURL, atomically: true, encoding: .utf8)
        clock.advance(by: 1.1)
        #expect(waitUntil { harness.logLines.all.contains { $0.contains("the fence file \(path) is back") } })
        let added = try send(harness, Self.gym)
        #expect(added["ok"] as? Bool == true, "\(added)")
        let file = try JSONSerialization.jsonObject(with: Data(contentsOf: harness.fencesURL)) as? [String: Any]
        let devices = file?["devices"] as? [String: [[String: Any]]]
        #expect(devices?["alice/phone"]?.compactMap { $0["identifier"] as? String } == ["home", "office", "gym"])
        #expect(devices?["van/7"]?.compactMap { $0["identifier"] as? String } == ["depot"], "the other device's fences are in the file")
    }
}
