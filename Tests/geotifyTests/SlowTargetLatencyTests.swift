import Dispatch
import Foundation
import GeotifyTestSupport
import Testing

/// A target that takes 10 s to answer each request does not slow evaluation or MQTT
/// publishing: the same fixes through `geotify run` without a target and with the slow
/// one, each published only after the notification of the one before arrived, timed
/// from the publish to the notification's arrival at a subscriber. The numbers are
/// printed, not asserted; what is asserted is that every notification reached MQTT while
/// the target still held its first requests.
@Suite("A slow delivery target", .serialized)
struct SlowTargetLatencyTests {
    /// Publish-to-notification times in milliseconds, and the worst p99 of the bridge's
    /// own evaluation latency over its one-second `stats` reports.
    struct Measurement {
        var milliseconds: [Double]
        var bridgeP99: Double

        func percentile(_ fraction: Double) -> Double {
            let sorted = milliseconds.sorted()
            return sorted[Int((fraction * Double(sorted.count - 1)).rounded(.up))]
        }

        var text: String {
            String(format: "p50 %.2f ms, p99 %.2f ms, max %.2f ms over %d notifications (bridge stats p99 at most %.2f ms)",
                   percentile(0.5), percentile(0.99), milliseconds.max() ?? 0, milliseconds.count, bridgeP99)
        }
    }

    let steps = 51

    /// Runs the fixes through `bridge`, one at a time, from a client that subscribes to
    /// nothing (so that no acknowledgement of its own holds back its next publish).
    func measure(_ bridge: BridgeProcess, _ scenario: DeliveryScenario) throws -> Measurement {
        let arrivals = try NotificationArrivals(port: scenario.broker.port, filter: "\(bridge.name)/event/#")
        let tracker = try TestClient(port: scenario.broker.port)
        var milliseconds: [Double] = []
        for step in 0..<steps {
            for device in scenario.devices {
                let start = DispatchTime.now().uptimeNanoseconds
                try tracker.publish("owntracks/\(device)", scenario.location(device, step: step))
                guard step > 0 else { continue }
                let arrival = try #require(arrivals.waitFor(scenario.eventID(device, step: step)))
                milliseconds.append(Double(arrival - start) / 1e6)
            }
        }
        #expect(waitUntil { scenario.observer.messages.contains { $0.topic == "\(bridge.name)/stats" } })
        let p99s = scenario.observer.messages.filter { $0.topic == "\(bridge.name)/stats" }.compactMap { message -> Double? in
            let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any]
            return (object?["latency_ms"] as? [String: Any])?["p99"] as? Double
        }
        return Measurement(milliseconds: milliseconds, bridgeP99: p99s.max() ?? 0)
    }

    @Test func aTargetTakingTenSecondsPerRequestLeavesEvaluationLatencyAlone() throws {
        let scenario = try DeliveryScenario("delivery-slow", devices: 4)
        try scenario.observer.subscribe("+/stats")
        let total = scenario.devices.count * (steps - 1)

        let plain = try scenario.startBridge("plain", extra: #""statsInterval": 1"#)
        let without = try measure(plain, scenario)
        plain.kill()

        let receiver = try WebhookReceiver(["/slow": .hold(seconds: 10)])
        let slow = try scenario.startBridge("slow", extra: #""statsInterval": 1, "#
            + DeliveryScenario.notify(DeliveryScenario.webhook("slow", url: receiver.url("/slow"))))
        let with = try measure(slow, scenario)
        // Every notification is on MQTT, and the target still holds its first requests.
        let held = receiver.holding
        let answered = receiver.exchanges.filter { $0.status != nil }.count
        #expect(with.milliseconds.count == total && scenario.notifications(of: slow).count == total)
        #expect(held >= 1 && answered + held < total, "\(answered) answered and \(held) held of \(total)")
        print("publish to notification without a delivery target: \(without.text)")
        print("publish to notification with a target answering in 10 s: \(with.text); meanwhile the target answered \(answered) and held \(held)")
        slow.kill()
    }
}
