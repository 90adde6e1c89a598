import Foundation
import Testing
import GeotifyBridge
import GeotifyTestSupport

/// The configurable limits on hostile input, through a real mosquitto: topic depth,
/// devices tracked, payload size and fence-file size.
@Suite("Input limits through mosquitto", .serialized, .waiting)
struct LimitsTests {
    @Test func topicsDeeperThanTheLimitAreRefused() throws {
        let harness = try BridgeHarness(start: false, configure: { $0.maximumTopicDepth = 5 })
        try harness.startBridge()
        try harness.observer.publish("geotify/location/a/b/c/d", #"{"lat":1,"lon":2}"#)
        try harness.observer.publish("geotify/location/a/b/c", #"{"lat":1,"lon":2}"#)
        let error = harness.observer.waitForMessage(on: "geotify/error")
        #expect(error?.text.contains(#""error":"invalid_topic""#) == true)
        #expect(error?.text.contains("the topic has more than 5 levels (maximumTopicDepth)") == true)
        #expect(waitUntil { harness.bridge?.counters.value(.fixesEvaluated) == 1 }, "the topic within the limit is evaluated")
        #expect(harness.bridge?.counters.value(.errors(.invalidTopic)) == 1)
    }

    @Test func devicesBeyondTheLimitAreRefusedWithOneClearLog() throws {
        let harness = try BridgeHarness(start: false, configure: { $0.maximumDevices = 2 })
        try harness.startBridge()
        for (index, device) in ["a/1", "b/2", "c/3", "d/4", "a/1"].enumerated() {
            try harness.observer.publish("geotify/location/\(device)", #"{"lat":1,"lon":2,"tst":\#(harness.base + index)}"#)
        }
        #expect(waitUntil { harness.bridge?.counters.value(.fixesEvaluated) == 3 }, "the first two devices keep being evaluated")
        #expect(waitUntil { harness.bridge?.counters.value(.errors(.tooManyDevices)) == 2 })
        // Everything the bridge publishes goes out in order: once the reply to a later
        // command is here, every error report about the positions is too.
        try harness.observer.publish("geotify/cmd/alice/phone", #"{"action":"list"}"#)
        #expect(harness.observer.waitForMessage(on: "geotify/reply/alice/phone") != nil)
        let errors = harness.observer.messages.filter { $0.topic == "geotify/error" }
        #expect(errors.count == 1)
        #expect(errors.first?.text.contains(#""error":"too_many_devices""#) == true)
        #expect(harness.logLines.all.filter { $0.contains("(maximumDevices)") }.count == 1)
    }

    @Test func aFenceFileLargerThanTheLimitIsRefusedAtStartAndOnReload() throws {
        let harness = try BridgeHarness(start: false, configure: { $0.maximumFenceFileBytes = 100 })
        #expect(throws: StartupError.self) { try harness.startBridge() }
        let small = try BridgeHarness(start: false, configure: { $0.maximumFenceFileBytes = 2_000 })
        try small.startBridge()
        try (BridgeHarness.fences + String(repeating: " ", count: 2_000)).write(to: small.fencesURL, atomically: true, encoding: .utf8)
        let report = small.observer.waitForMessage(on: "geotify/error")?.text ?? ""
        #expect(report.contains("at most 2000 are accepted (maximumFenceFileBytes)"))
        #expect(small.bridge?.fenceBook.fenceCount == 3)
    }
}
