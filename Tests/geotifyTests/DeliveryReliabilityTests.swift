import Foundation
import GeotifyTestSupport
import Testing

/// Delivery from the outbox through the real `geotify run`, a real mosquitto and a local
/// webhook receiver: a target that is down for a while, and a bridge SIGKILLed with
/// deliveries pending, under way and retrying. The receiver counts idempotency keys the
/// way a deduplicating receiver would.
@Suite("Delivery through geotify run", .waiting)
struct DeliveryReliabilityTests {
    @Test(.longWaiting) func aTargetDownForAWhileGetsEveryNotificationOnceInOrderPerDeviceWhenBack() throws {
        let scenario = try DeliveryScenario("delivery-down", devices: 3)
        let receiver = try WebhookReceiver(["/hook": .failRetryAfter(seconds: 1)])
        // One attempt at a time: a failure rests the target for the second its
        // `Retry-After` asks (its own back-off, 5-10 s, is DeliveryWorkerTests' to show).
        let bridge = try scenario.startBridge("down", extra: DeliveryScenario.notify(
            DeliveryScenario.webhook("hook", url: receiver.url("/hook"), #""concurrency": 1"#)))
        let steps = 8
        let expected = scenario.expectedIDs(steps: steps)
        let total = expected.values.map(\.count).reduce(0, +)
        try scenario.publishAll(steps: steps)

        // The target being down holds up neither evaluation nor MQTT.
        #expect(waitUntil(timeout: 15) { scenario.notifications(of: bridge).count == total })
        #expect(waitUntil { ((try? scenario.deliveries(of: bridge)["hook"]?.retrying) ?? 0) >= 1 })
        let status = try runGeotify(["notify", "status", "--config", bridge.settingsURL.path], in: scenario.directory)
        #expect(status.status == 0)
        #expect(status.output.contains("HTTP 503: down for maintenance"), "notify status shows the outage: \(status.output)")
        #expect(receiver.acknowledged("/hook").isEmpty)

        receiver.set("/hook", .accept)
        #expect(waitUntil(timeout: 25) {
            guard let hook = try? scenario.deliveries(of: bridge)["hook"] else { return false }
            return hook.delivered == total && hook.pending == 0 && hook.retrying == 0
        }, "delivered: \(receiver.acknowledged("/hook").count) of \(total)")

        let acknowledged = receiver.acknowledged("/hook")
        #expect(acknowledged.count == total && Set(acknowledged) == Set(expected.values.joined()), "each acknowledged exactly once")
        #expect(DeliveryScenario.perDevice(acknowledged) == expected, "in order per device")
        // Every attempt, retries included: a device's next notification never went out
        // before the one before it was acknowledged.
        let attempts = DeliveryScenario.perDevice(receiver.received("/hook")).mapValues { keys in
            keys.enumerated().filter { $0.offset == 0 || keys[$0.offset - 1] != $0.element }.map(\.element)
        }
        #expect(attempts == expected)
        #expect(receiver.exchanges.contains { $0.status == 503 })
        #expect(DeliveryScenario.perDevice(scenario.notifications(of: bridge).map(\.id)) == expected)
    }

    @Test(.longWaiting) func killedWithDeliveriesPendingUnderWayAndRetryingItDeliversEachOnceAfterTheRestart() throws {
        let scenario = try DeliveryScenario("delivery-kill", devices: 3)
        let receiver = try WebhookReceiver(["/steady": .accept, "/flaky": .failRetryAfter(seconds: 2), "/stuck": .hold(seconds: 60)])
        let bridge = try scenario.startBridge("killed", extra: DeliveryScenario.notify(
            DeliveryScenario.webhook("steady", url: receiver.url("/steady")),
            DeliveryScenario.webhook("flaky", url: receiver.url("/flaky"), #""concurrency": 1"#),
            DeliveryScenario.webhook("stuck", url: receiver.url("/stuck"))))
        let steps = 6
        let expected = scenario.expectedIDs(steps: steps)
        let total = expected.values.map(\.count).reduce(0, +)
        try scenario.publishAll(steps: steps)
        #expect(waitUntil(timeout: 15) { scenario.notifications(of: bridge).count == total })

        // The moment of the kill: everything `steady` acknowledged is recorded, `flaky`
        // has a failed delivery waiting for its retry and the rest pending behind it,
        // and `stuck` has two deliveries under way (held by the receiver).
        #expect(waitUntil(timeout: 15) {
            guard let counts = try? scenario.deliveries(of: bridge) else { return false }
            return counts["steady"]?.delivered == total && (counts["flaky"]?.retrying ?? 0) >= 1 && receiver.holding == 2
        })
        let atKill = try scenario.deliveries(of: bridge)
        #expect(atKill["flaky"]?.pending == total - 1)
        #expect(atKill["stuck"]?.pending == total, "under way is still pending in the database")
        bridge.kill()

        // The held requests are answered only now, to a dead bridge: not acknowledged.
        let underWay = receiver.exchanges.filter { $0.path == "/stuck" && $0.status == nil }.map(\.key)
        receiver.set("/stuck", .fail)
        receiver.release()
        #expect(waitUntil { receiver.exchanges.allSatisfy { $0.status != nil } })
        receiver.set("/flaky", .accept)
        receiver.set("/stuck", .accept)
        let beforeRestart = receiver.exchanges.count
        try scenario.start(bridge)

        #expect(waitUntil(timeout: 25) {
            guard let counts = try? scenario.deliveries(of: bridge) else { return false }
            return ["steady", "flaky", "stuck"].allSatisfy { counts[$0]?.delivered == total && counts[$0]?.pending == 0 && counts[$0]?.retrying == 0 }
        }, "delivered: \(["steady", "flaky", "stuck"].map { "\($0) \(receiver.acknowledged("/\($0)").count)" }) of \(total)")
        #expect(try scenario.deliveries(of: bridge).values.allSatisfy { $0.dead == 0 })

        let afterRestart = receiver.exchanges.dropFirst(beforeRestart)
        for path in ["/steady", "/flaky", "/stuck"] {
            let acknowledged = receiver.acknowledged(path)
            #expect(acknowledged.count == total && Set(acknowledged) == Set(expected.values.joined()), "\(path): each acknowledged exactly once")
            #expect(DeliveryScenario.perDevice(acknowledged) == expected, "\(path): in order per device")
            let again = afterRestart.filter { $0.path == path }.map(\.key)
            #expect(Set(again).count == again.count, "\(path): nothing sent twice after the restart")
        }
        #expect(!afterRestart.contains { $0.path == "/steady" }, "nothing acknowledged before the kill is sent again")
        #expect(underWay.count == 2)
        #expect(Set(underWay).isSubset(of: afterRestart.filter { $0.path == "/stuck" }.map(\.key)), "what was under way goes again, with the same key")
        #expect(scenario.notifications(of: bridge).count == total, "the restart publishes no notification again")
    }
}
