import Foundation
import GeotifyStore
import GeotifyTestSupport

/// What the tests of delivery through the bridge share: a broker, devices with one fence
/// each, an observer of what the bridges publish, and fixes that go in and out of the
/// fences, so that every fix of a device after its first is a notification.
final class DeliveryScenario {
    let directory: URL
    let broker: TestBroker
    let observer: TestClient
    let devices: [String]
    let fencesURL: URL
    /// Recent fix times: the bridge drops fixes older than a day.
    let base = Int(Date().timeIntervalSince1970) - 7_200
    /// The webhooks' signing secret, in the file `webhook.secret` beside the settings.
    static let secret = "whsec_5f0c2e9a7b"

    /// `count` devices, `user0/phone`..., each with the fence `zone` (entry and exit).
    init(_ name: String, devices count: Int) throws {
        directory = try makeTemporaryDirectory(name)
        devices = (0..<count).map { "user\($0)/phone" }
        let fences = devices.enumerated().map { index, device in
            #""\#(device)": [{"identifier": "zone", "latitude": \#(50 + Double(index) / 10), "longitude": 8, "radius": 200, "note": "zone \#(index)", "eventType": "onEntryAndExit"}]"#
        }
        fencesURL = directory.appendingPathComponent("fences.json")
        try #"{"devices": {\#(fences.joined(separator: ", "))}}"#.write(to: fencesURL, atomically: true, encoding: .utf8)
        try "\(DeliveryScenario.secret)\n".write(
            to: directory.appendingPathComponent("webhook.secret"), atomically: true, encoding: .utf8)
        // Without Nagle on the broker's side, a notification is not held back ~40 ms per hop.
        broker = try TestBroker(extraConfig: "max_queued_messages 100000\nset_tcp_nodelay true")
        observer = try TestClient(port: broker.port)
        for filter in ["+/event/#", "+/status", "+/error"] { try observer.subscribe(filter) }
    }

    deinit {
        observer.disconnect()
        broker.stop()
    }

    /// A `geotify run` of its own (settings file, state directory, topic prefix `name`)
    /// with the settings members `extra` (`"notify": {...}`), started and online.
    func startBridge(_ name: String, extra: String? = nil) throws -> BridgeProcess {
        let bridge = try BridgeProcess(name: name, port: broker.port, fences: fencesURL, directory: directory, extra: extra)
        try start(bridge)
        return bridge
    }

    /// The settings member `"notify"` with `targets` (JSON objects).
    static func notify(_ targets: String...) -> String {
        #""notify": {"targets": [\#(targets.joined(separator: ", "))]}"#
    }

    /// A webhook target named `name` posting to `url`, signed with `secret`, with the
    /// members `extra` (`"concurrency": 1`).
    static func webhook(_ name: String, url: String, _ extra: String? = nil) -> String {
        #"{"name": "\#(name)", "type": "webhook", "url": "\#(url)", "secret": {"file": "webhook.secret"}\#(extra.map { ", \($0)" } ?? "")}"#
    }

    /// Starts `bridge` (again) and waits until it says it is online.
    func start(_ bridge: BridgeProcess) throws {
        let seen = observer.messages.filter { $0.topic == "\(bridge.name)/status" && $0.text == "online" }.count
        try bridge.start()
        guard waitUntil(timeout: 20, {
            observer.messages.filter { $0.topic == "\(bridge.name)/status" && $0.text == "online" }.count > seen
        }) else {
            throw TestSupportError("\(bridge.name) did not come online: \((try? String(contentsOf: bridge.logURL, encoding: .utf8)) ?? "")")
        }
    }

    /// Fix `step` of `device`: inside its zone on odd steps, 5 km south on even ones.
    func location(_ device: String, step: Int) -> String {
        let index = devices.firstIndex(of: device) ?? 0
        let latitude = 50 + Double(index) / 10 - (step % 2 == 0 ? 0.045 : 0)
        return #"{"_type":"location","lat":\#(latitude),"lon":8,"acc":5,"tst":\#(base + step * 10)}"#
    }

    func publish(_ device: String, step: Int) throws {
        try observer.publish("owntracks/\(device)", location(device, step: step))
    }

    /// Publishes steps `0..<steps` of every device, a step of each device at a time.
    func publishAll(steps: Int) throws {
        for step in 0..<steps { for device in devices { try publish(device, step: step) } }
    }

    /// The id of the notification that fix `step` (from 1) of `device` causes.
    func eventID(_ device: String, step: Int) -> String {
        "\(device)/zone/\(step % 2 == 1 ? "enter" : "exit")/\(base + step * 10)"
    }

    /// The ids of the notifications of every device for steps `1..<steps`, by device, in order.
    func expectedIDs(steps: Int) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: devices.map { device in (device, (1..<steps).map { eventID(device, step: $0) }) })
    }

    /// The notifications `bridge` published on MQTT, in order: their ids and payloads.
    func notifications(of bridge: BridgeProcess) -> [(id: String, payload: [UInt8])] {
        observer.messages.filter { $0.topic.hasPrefix("\(bridge.name)/event/") }.compactMap { message in
            guard let object = try? JSONSerialization.jsonObject(with: Data(message.payload)) as? [String: Any],
                  let id = object["id"] as? String
            else { return nil }
            return (id, message.payload)
        }
    }

    /// The errors `bridge` published on `<name>/error`, parsed.
    func errors(of bridge: BridgeProcess) -> [[String: Any]] {
        observer.messages.filter { $0.topic == "\(bridge.name)/error" }.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.payload)) as? [String: Any]
        }
    }

    /// How each target's deliveries stand in `bridge`'s state database, by target.
    func deliveries(of bridge: BridgeProcess) throws -> [String: DeliveryCounts] {
        let counts = try DeliveryQueue(path: bridge.statePath).counts()
        return Dictionary(uniqueKeysWithValues: counts.map { ($0.target, $0) })
    }

    /// `ids` grouped by device (the first two levels of an event id), order kept.
    static func perDevice(_ ids: [String]) -> [String: [String]] {
        Dictionary(grouping: ids) { id in id.split(separator: "/").prefix(2).joined(separator: "/") }
    }
}
