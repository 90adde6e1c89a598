import Foundation
@testable import GeotifyBridge
import GeotifyConsole
import GeotifyJSON
import GeotifyMQTT
import GeotifyTestSupport
import GeotifyTime

/// The real bridge with its web console, for the console's tests that the fixture
/// cannot stand in for: a `BridgeHarness` (its own mosquitto, fence file, state and an
/// observer of everything published under `geotify/`) on a clock the test moves, whose
/// settings have an `http` section with logins, listening on a port the system picks.
/// Requests go over a real socket, one connection each.
final class ConsoleBridge {
    /// bcrypt of "s3cret" at cost 5.
    static let hash = "$2y$05$jKatOKD8jNmQpD8fiHOkJuB7w8EYgxGGPqGi88HMdtTpszAJE9QCS"
    /// The console's users (password "s3cret") and their roles: `alice` is the tracker
    /// credential of alice's devices (it posts to `/pub` as `alice/<device>`).
    static let roles: JSON = ["admin": ["manage"], "viewer": ["read"], "alice": ["tracker"], "prometheus": ["metrics"]]

    /// The fences of each twin.
    static let twinFences = """
        [ { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100,
            "note": "Welcome home", "eventType": "onEntryAndExit" },
          { "identifier": "office", "latitude": 52.5163, "longitude": 13.3777, "radius": 150,
            "note": "Left the office", "eventType": "onExit" } ]
        """

    /// Twins: `alice/mqtt` and `alice/http` have the same fences, so the same fixes give
    /// them the same notifications; `van/7` is a third device positions go to meanwhile.
    static let fences = """
        { "devices": {
            "alice/mqtt": \(twinFences),
            "alice/http": \(twinFences),
            "van/7": [ { "identifier": "depot", "latitude": 48.1374, "longitude": 11.5755, "radius": 250,
                         "note": "Van 7 is back", "eventType": "onEntryAndExit" } ] } }
        """

    let clock: ManualScheduler
    let harness: BridgeHarness
    let port: Int
    private let usersDirectory: URL

    /// A running bridge and console; `http` adds keys to the `http` settings object.
    init(http extra: JSON = [:], configure: @escaping (inout Settings) -> Void = { _ in }) throws {
        usersDirectory = try makeTemporaryDirectory("console-users")
        let users = ["admin", "viewer", "alice", "prometheus"].map { "\($0):\(Self.hash)" }.joined(separator: "\n")
        try users.write(to: usersDirectory.appendingPathComponent("users"), atomically: true, encoding: .utf8)
        var object = extra.objectValue ?? JSONObject()
        object["listen"] = "127.0.0.1:0"
        object["users"] = "users"
        object["roles"] = Self.roles
        object["tiles"] = ""
        let http = try ConsoleSettings(parsing: object, file: usersDirectory.appendingPathComponent("geotify.json").path)
        clock = ManualScheduler(now: Date().timeIntervalSince1970)
        harness = try BridgeHarness(fences: Self.fences, clock: clock) { settings in
            settings.http = http
            configure(&settings)
        }
        try harness.observer.subscribe("homeassistant/#")
        guard let address = harness.bridge?.consoleAddress else { throw TestSupportError("the bridge started no web console") }
        port = address.port
    }

    deinit {
        try? FileManager.default.removeItem(at: usersDirectory)
    }

    /// The running bridge.
    var bridge: Bridge {
        get throws {
            guard let bridge = harness.bridge else { throw TestSupportError("the bridge is not running") }
            return bridge
        }
    }

    /// One request on a connection of its own, as `user` (password "s3cret") when given.
    func call(
        _ method: String, _ path: String, body: String? = nil, contentType: String = "application/json",
        as user: String? = "admin", headers: [String: String] = [:]
    ) throws -> RawHTTPConnection.Response {
        var fields = headers
        if let user { fields["Authorization"] = "Basic " + Data("\(user):s3cret".utf8).base64EncodedString() }
        if let body {
            fields["Content-Type"] = contentType
            fields["Content-Length"] = String(body.utf8.count)
        }
        let head = fields.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)\r\n" }.joined()
        let connection = try RawHTTPConnection(port: port)
        try connection.send("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\(head)\r\n\(body ?? "")")
        return try connection.readResponse()
    }

    /// The body of `response` as JSON (null when it is not).
    static func json(_ response: RawHTTPConnection.Response) -> JSON {
        (try? JSONParser(maxDepth: 64).parse(response.body)) ?? .null
    }

    /// A fence command for `device` through `/api/cmd/`: the status and the reply.
    func command(_ body: String, device: String = "alice/mqtt", as user: String = "admin") throws -> (Int, JSON) {
        let response = try call("POST", "/api/cmd/\(device)", body: body, as: user)
        return (response.status, Self.json(response))
    }

    /// An OwnTracks location of `latitude`, `longitude` taken `tst` seconds after the
    /// harness's base time, as the app sends it (over MQTT or in HTTP mode).
    func location(_ latitude: Double, _ longitude: Double, tst: Int) -> String {
        #"{"_type":"location","lat":\#(latitude),"lon":\#(longitude),"tst":\#(harness.base + tst),"acc":10,"tid":"ap","batt":90}"#
    }

    /// Sends a `list` command for `device` over MQTT and waits for its reply: everything
    /// the device's lane published before it has then arrived.
    func settle(_ device: String = "alice/mqtt") throws {
        let marker = UUID().uuidString
        try harness.observer.publish("geotify/cmd/\(device)", #"{"action":"list","id":"\#(marker)"}"#)
        guard harness.observer.waitForMessage(on: "geotify/reply/\(device)", where: { $0.text.contains(marker) }) != nil else {
            throw TestSupportError("no reply to the command \(marker) for \(device)")
        }
    }

    /// Posts a location for `alice/<device>` to `/pub` with the tracker credential.
    func post(_ device: String, _ latitude: Double, _ longitude: Double, tst: Int) throws -> RawHTTPConnection.Response {
        try call("POST", "/pub", body: location(latitude, longitude, tst: tst), as: "alice", headers: ["X-Limit-U": "alice", "X-Limit-D": device])
    }

    /// The fence file's text now.
    var fenceFile: String {
        (try? String(contentsOf: harness.fencesURL, encoding: .utf8)) ?? ""
    }

    /// The fence `identifier` of `device` as the fence file holds it now.
    func storedFence(_ identifier: String, of device: String) -> [String: Any]? {
        let file = (try? JSONSerialization.jsonObject(with: Data(fenceFile.utf8))) as? [String: Any]
        let fences = (file?["devices"] as? [String: Any])?[device] as? [[String: Any]]
        return fences?.first { $0["identifier"] as? String == identifier }
    }

    /// The JSON `GET path` answers the manager (null when the request fails).
    func read(_ path: String) -> JSON {
        (try? call("GET", path)).map(Self.json) ?? .null
    }

    /// The counter `name` of the bridge (`errors.invalid_json`, `http_refused.body_too_large`, ...).
    func counter(_ name: String) throws -> Int {
        try bridge.counters.snapshot[name] ?? 0
    }

    /// Everything published so far on topics that end in `device`, in order.
    func published(for device: String) -> [MQTTMessage] {
        harness.observer.messages.filter { $0.topic.hasSuffix("/" + device) }
    }
}
