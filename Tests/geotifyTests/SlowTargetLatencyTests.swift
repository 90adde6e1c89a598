import Dispatch
import Foundation
import GeotifyTestSupport
import Testing

/// A target that takes 10 s to answer each request does not slow evaluation or MQTT
/// publishing. The same fixes go through `geotify run` without a target, with one that
/// answers at once and with the slow one, each published after the notification of the
/// one before arrived. Two latencies are taken: from the publish to the notification's
/// arrival at a subscriber, and the bridge's own (arrival to commit, its `/metrics`
/// histogram). The numbers are printed, not asserted; what is asserted is that every
/// notification reached MQTT while the slow target still held its first requests.
@Suite("A slow delivery target", .serialized, .waiting)
struct SlowTargetLatencyTests {
    /// What one run measured.
    struct Measurement {
        /// Publish to arrival, per notification, in milliseconds.
        var milliseconds: [Double]
        /// The bridge's evaluation latency: cumulative counts by bucket upper bound (s).
        var buckets: [(bound: Double, count: Int)]

        func percentile(_ fraction: Double) -> Double {
            let sorted = milliseconds.sorted()
            return sorted[Int((fraction * Double(sorted.count - 1)).rounded(.up))]
        }

        /// The bucket bound (within 19 %, in milliseconds) under which `fraction` of the
        /// bridge's evaluations finished.
        func bridgePercentile(_ fraction: Double) -> Double {
            let rank = Int((fraction * Double(buckets.last?.count ?? 0)).rounded(.up))
            return (buckets.first { $0.count >= rank }?.bound ?? .infinity) * 1000
        }

        var text: String {
            String(format: "publish to notification p50 %.2f ms, p99 %.2f ms, max %.2f ms over %d; in the bridge p50 %.3f ms, p99 %.3f ms",
                   percentile(0.5), percentile(0.99), milliseconds.max() ?? 0, milliseconds.count,
                   bridgePercentile(0.5), bridgePercentile(0.99))
        }
    }

    let steps = 31

    /// Starts a bridge `name` with the web console (for `/metrics`) and `notify`.
    /// On a port `freePort()` chose: one another test's server took meanwhile is tried
    /// again with a fresh one.
    func start(_ name: String, _ scenario: DeliveryScenario, notify: String? = nil) throws -> (BridgeProcess, port: Int) {
        let (bridge, ports) = try withFreePorts(1, retrying: { "\($0)".contains("cannot listen on") }) { ports in
            try scenario.startBridge(name, extra: #""http": {"listen": "127.0.0.1:\#(ports[0])"}"# + (notify.map { ", \($0)" } ?? ""))
        }
        return (bridge, ports[0])
    }

    /// Runs the fixes through `bridge`, one at a time, from a client that subscribes to
    /// nothing (so that no acknowledgement of its own holds back its next publish).
    func measure(_ bridge: BridgeProcess, metrics port: Int, _ scenario: DeliveryScenario) throws -> Measurement {
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
        let connection = try RawHTTPConnection(port: port)
        try connection.send("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        let prefix = #"geotify_evaluation_latency_seconds_bucket{le=""#
        let buckets = try connection.readResponse().text.split(separator: "\n").compactMap { line -> (Double, Int)? in
            guard line.hasPrefix(prefix), let end = line.firstIndex(of: "}") else { return nil }
            let bound = line[line.index(line.startIndex, offsetBy: prefix.count)..<line.index(before: end)]
            guard let count = Int(line[line.index(after: end)...].trimmingCharacters(in: .whitespaces)) else { return nil }
            return (bound == "+Inf" ? .infinity : Double(bound) ?? .infinity, count)
        }
        #expect(buckets.last?.1 == scenario.devices.count * steps, "the bridge timed every fix")
        return Measurement(milliseconds: milliseconds, buckets: buckets)
    }

    @Test func aTargetTakingTenSecondsPerRequestLeavesEvaluationLatencyAlone() throws {
        let scenario = try DeliveryScenario("delivery-slow", devices: 4)
        let total = scenario.devices.count * (steps - 1)
        let receiver = try WebhookReceiver(["/fast": .accept, "/slow": .hold(seconds: 10)])

        let (plain, plainPort) = try start("plain", scenario)
        let without = try measure(plain, metrics: plainPort, scenario)
        plain.kill()
        let (fast, fastPort) = try start("fast", scenario, notify: DeliveryScenario.notify(DeliveryScenario.webhook("fast", url: receiver.url("/fast"))))
        let quick = try measure(fast, metrics: fastPort, scenario)
        // Deliveries trail the notifications; the fast target gets them all before its bridge goes.
        #expect(waitUntil(timeout: 30) { receiver.acknowledged("/fast").count == total }, "\(receiver.acknowledged("/fast").count) of \(total) delivered")
        fast.kill()
        let (slow, slowPort) = try start("slow", scenario, notify: DeliveryScenario.notify(DeliveryScenario.webhook("slow", url: receiver.url("/slow"))))
        let with = try measure(slow, metrics: slowPort, scenario)

        // Every notification is on MQTT, and the slow target still holds its first requests.
        // (The scenario's observer is another subscriber than the one `measure` waited on:
        // it may get the last notification a moment later.)
        #expect(with.milliseconds.count == total)
        #expect(waitUntil { scenario.notifications(of: slow).count == total }, "\(scenario.notifications(of: slow).count) of \(total) seen")
        let held = receiver.holding
        let answered = receiver.acknowledged("/slow").count
        #expect(held >= 1 && answered + held < total, "\(answered) answered and \(held) held of \(total)")
        print("""
            no delivery target:            \(without.text)
            a target answering at once:    \(quick.text)
            a target answering after 10 s: \(with.text); meanwhile it answered \(answered) and held \(held) of \(total)
            """)
        slow.kill()
    }
}
