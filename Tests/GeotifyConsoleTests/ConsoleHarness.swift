import Foundation
import GeotifyConsole
import GeotifyConsoleFixture
import GeotifyHTTP
import GeotifyJSON
import GeotifyTestSupport
import GeotifyTime
import Synchronization

/// The console over a `FixtureBridge` with a fence file in a fresh directory and a manual
/// clock, called through its `HTTPApplication` (routing, logins, handlers) without a
/// socket: each request takes microseconds.
final class ConsoleHarness {
    /// bcrypt of "s3cret" at cost 5.
    static let hash = "$2y$05$jKatOKD8jNmQpD8fiHOkJuB7w8EYgxGGPqGi88HMdtTpszAJE9QCS"
    /// The users of a harness with logins, and their roles.
    static let roles: JSON = ["alice": ["manage"], "bob": ["read"], "alice-phone": ["tracker"], "prometheus": ["metrics"]]

    static let fences = """
        { "devices": { "alice/phone": [
            { "identifier": "home", "latitude": 52.52, "longitude": 13.405, "radius": 100, "note": "Welcome home", "eventType": "onEntryAndExit" },
            { "identifier": "park", "polygon": [[[13.40, 52.50], [13.41, 52.50], [13.41, 52.51], [13.40, 52.51]], [[13.404, 52.504], [13.406, 52.504], [13.406, 52.506]]], "note": "In the park", "eventType": "onEntry" } ],
          "bob/phone": [] },
          "groups": { "family": ["alice/phone", "bob/phone"] },
          "shared": [ { "identifier": "office", "latitude": 52.5163, "longitude": 13.3777, "radius": 150, "note": "At the office", "eventType": "onEntryAndExit" },
                      { "identifier": "dateline", "polygon": [[179.5, -17], [-179.5, -17], [-179.5, -16], [179.5, -16]], "note": "Across", "eventType": "onExit", "group": "family" } ] }
        """

    let directory: URL
    let fencesPath: String
    let scheduler = ManualScheduler()
    let bridge: FixtureBridge
    let console: Console
    let application: HTTPApplication
    /// What the console logged, each line as "level message".
    var logged: [String] { lines.all.withLock { $0 } }
    private let lines = Lines()

    /// The lines logged, shared with the console's log closure.
    private final class Lines: Sendable {
        let all = Mutex<[String]>([])
    }

    /// A console on a fresh fence file; `streamBound`: the bytes a page's stream may have
    /// waiting.
    init(logins: Bool = false, settings extra: JSON = [:], streamBound: Int = EventStream.defaultMaximumPending) throws {
        directory = try makeTemporaryDirectory("console")
        fencesPath = directory.appendingPathComponent("fences.json").path
        try Data(Self.fences.utf8).write(to: URL(fileURLWithPath: fencesPath))
        var object = extra.objectValue ?? JSONObject()
        if logins {
            let users = ["alice", "bob", "alice-phone", "prometheus"].map { "\($0):\(Self.hash)" }.joined(separator: "\n")
            try Data(users.utf8).write(to: directory.appendingPathComponent("users"))
            object["users"] = "users"
            object["roles"] = Self.roles
        }
        let settings = try ConsoleSettings(parsing: object, file: directory.appendingPathComponent("geotify.json").path)
        bridge = FixtureBridge(fencesPath: fencesPath, scheduler: scheduler)
        console = try Console(
            settings: settings, backend: bridge, scheduler: scheduler, log: { [lines] level, message in lines.all.withLock { $0.append("\(level) \(message)") } },
            count: { [bridge] in bridge.add($0) }, maximumPendingPerStream: streamBound)
        application = console.application
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Writes the users file anew (as a new file put in its place, as `htpasswd` does),
    /// with `users` (password "s3cret") and the lines `extra`.
    func writeUsers(_ users: [String], extra: [String] = []) throws {
        let text = (users.map { "\($0):\(Self.hash)" } + extra).joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: directory.appendingPathComponent("users"), options: .atomic)
    }

    /// The response to one request, as `user` (password "s3cret") when given.
    func call(
        _ method: String, _ path: String, body: String? = nil, contentType: String? = "application/json",
        as user: String? = nil, headers: [String: String] = [:]
    ) -> HTTPResponse {
        var fields = headers
        if let user { fields["Authorization"] = BasicCredentials(user: user, password: "s3cret").authorization }
        if body != nil, let contentType { fields["Content-Type"] = contentType }
        let path = path.split(separator: "?", maxSplits: 1)
        var query: [String: String] = [:]
        if path.count == 2 {
            for pair in path[1].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
                query[parts[0]] = parts.count > 1 ? parts[1] : ""
            }
        }
        let request = HTTPRequest(method: method, path: String(path[0]), query: query, headers: fields, body: Array((body ?? "").utf8))
        let box = Mutex<HTTPResponse?>(nil)
        application.handle(request, HTTPResponder { response in box.withLock { $0 = response } })
        return box.withLock { $0 } ?? HTTPResponse.text("the handler did not answer", status: 599)
    }

    /// The response body as JSON (null when it is not).
    func json(_ response: HTTPResponse) -> JSON {
        (try? JSONParser(maxDepth: 64).parse(response.bytes)) ?? .null
    }

    /// The fence file's text now.
    var fenceFile: String {
        (try? String(contentsOfFile: fencesPath, encoding: .utf8)) ?? ""
    }

    /// Posts an OwnTracks location for `alice/phone` through `/pub`.
    @discardableResult
    func move(_ latitude: Double, _ longitude: Double, user: String = "alice", device: String = "phone", time: Int = 1_700_000_100) -> HTTPResponse {
        call("POST", "/pub", body: "{\"_type\":\"location\",\"lat\":\(latitude),\"lon\":\(longitude),\"acc\":5,\"tst\":\(time)}",
             headers: ["X-Limit-U": user, "X-Limit-D": device])
    }
}
