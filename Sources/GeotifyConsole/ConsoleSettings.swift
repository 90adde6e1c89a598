import Foundation
import GeotifyHTTP
import GeotifyJSON

/// The web console's settings: the `http` object of the settings file.
///
/// ```json
/// "http": {"listen": "127.0.0.1:8091", "users": "users.htpasswd",
///          "roles": {"alice": ["manage"], "alice-phone": ["tracker"], "prometheus": ["metrics"]}}
/// ```
/// Every key is optional; `"http": {}` serves on 127.0.0.1:8091 without logins. Without
/// a users file the server must listen on a loopback address: anything else is refused,
/// so the map and `/pub` are never open to the network by accident.
package struct ConsoleSettings: Sendable, Equatable {
    package var server: HTTPServer.Options
    package var basePath: BasePath
    /// The htpasswd file, resolved against the settings file's directory; nil: no logins.
    package var usersFile: String?
    /// Roles by user; users not named get `read`.
    package var roles: [String: Set<Role>]
    /// The tile URL template (`{z}/{x}/{y}`, optional `{s}`); empty for no tiles.
    package var tiles: String
    package var tileAttribution: String
    /// Where Leaflet's files are (Debian's `libjs-leaflet`).
    package var leafletDirectory: String
    /// Notifications kept for the page.
    package var recentNotifications: Int

    /// The keys the `http` object may have.
    package static let keys: Set<String> = [
        "listen", "basePath", "users", "roles", "tiles", "tileAttribution", "leaflet", "threads",
        "maximumConnections", "maximumBodyBytes", "maximumHeaderBytes", "headerTimeout", "idleTimeout",
        "recentNotifications",
    ]

    /// OpenStreetMap's standard tiles.
    package static let openStreetMapTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"

    /// The settings with every default: 127.0.0.1:8091, no logins, OpenStreetMap tiles.
    package init() {
        server = HTTPServer.Options(listen: ListenAddress(host: "127.0.0.1", port: ListenAddress.defaultPort))
        basePath = BasePath.none
        usersFile = nil
        roles = [:]
        tiles = ConsoleSettings.openStreetMapTiles
        tileAttribution = "© OpenStreetMap contributors"
        leafletDirectory = "/usr/share/javascript/leaflet"
        recentNotifications = 100
    }

    /// Reads the `http` object of `file` (whose directory relative paths are against);
    /// refuses unknown keys and wrong values with the key and the reason.
    package init(parsing object: JSONObject, file: String) throws(HTTPSettingsError) {
        self.init()
        let directory = (file as NSString).deletingLastPathComponent
        func fail(_ key: String, _ reason: String) -> HTTPSettingsError {
            HTTPSettingsError("\(file): \"http.\(key)\" \(reason)")
        }
        for key in object.keys where !ConsoleSettings.keys.contains(key) {
            throw HTTPSettingsError("\(file): unknown key \"http.\(key)\" (one of \(ConsoleSettings.keys.sorted().joined(separator: ", ")))")
        }
        func string(_ key: String) throws(HTTPSettingsError) -> String? {
            guard let value = object[key] else { return nil }
            guard let text = value.stringValue else { throw fail(key, "must be a string, not \(value.kindDescription)") }
            return text
        }
        func number(_ key: String, _ range: ClosedRange<Double>, whole: Bool) throws(HTTPSettingsError) -> Double? {
            guard let value = object[key] else { return nil }
            guard let number = value.numberValue else { throw fail(key, "must be a number, not \(value.kindDescription)") }
            guard range.contains(number), !whole || number == number.rounded() else {
                throw fail(key, "must be a\(whole ? " whole" : "") number from \(JSONWriter.text(of: range.lowerBound)) to \(JSONWriter.text(of: range.upperBound)), not \(JSONWriter.text(of: number))")
            }
            return number
        }
        if let listen = try string("listen") {
            do {
                server.listen = try ListenAddress(parsing: listen)
            } catch {
                throw fail("listen", error.message)
            }
        }
        if let base = try string("basePath") {
            do {
                basePath = try BasePath(base)
            } catch {
                throw fail("basePath", error.message)
            }
        }
        if let users = try string("users") {
            guard !users.isEmpty else { throw fail("users", "must not be empty (leave it out for no logins)") }
            usersFile = users.hasPrefix("/") || directory.isEmpty ? users : (directory as NSString).appendingPathComponent(users)
        }
        if let value = object["roles"] {
            guard let rolesObject = value.objectValue else { throw fail("roles", "must be an object {\"user\": [\"read\", ...]}, not \(value.kindDescription)") }
            for member in rolesObject.members {
                guard let list = member.value.arrayValue else { throw fail("roles.\(member.key)", "must be an array of roles") }
                var set = Set<Role>()
                for item in list {
                    guard let name = item.stringValue, let role = Role(rawValue: name) else {
                        throw fail("roles.\(member.key)", "has \(JSONWriter().string(item)), not one of \(Role.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    set.insert(role)
                }
                roles[member.key] = set
            }
        }
        if let tiles = try string("tiles") {
            guard tiles.isEmpty || SecurityHeaders.origin(ofTemplate: tiles) != nil else {
                throw fail("tiles", "must be an http(s) URL template like \(ConsoleSettings.openStreetMapTiles), or \"\" for none")
            }
            self.tiles = tiles
        }
        if let attribution = try string("tileAttribution") { tileAttribution = attribution }
        if let leaflet = try string("leaflet") { leafletDirectory = leaflet }
        if let threads = try number("threads", 1...64, whole: true) { server.threads = Int(threads) }
        if let value = try number("maximumConnections", 1...100_000, whole: true) { server.maximumConnections = Int(value) }
        if let value = try number("maximumBodyBytes", 1024...1_073_741_824, whole: true) { server.limits.maximumBodyBytes = Int(value) }
        if let value = try number("maximumHeaderBytes", 2048...1_048_576, whole: true) { server.maximumHeaderBytes = Int(value) }
        if let value = try number("headerTimeout", 1...3600, whole: false) { server.headerTimeout = value }
        if let value = try number("idleTimeout", 1...86400, whole: true) { server.idleTimeout = Int(value) }
        if let value = try number("recentNotifications", 0...10_000, whole: true) { recentNotifications = Int(value) }
        if usersFile == nil && !server.listen.isLoopback {
            throw HTTPSettingsError("\(file): \"http.listen\" is \(server.listen), not a loopback address, so \"http.users\" is required (make it with htpasswd -B -c)")
        }
    }

    /// The console's address for links from elsewhere (Home Assistant's
    /// `configuration_url`): `http://<listen address><base path>/`. Nil when the server
    /// listens on every interface, which names no host to link to, or on a port the
    /// system chooses.
    package var linkAddress: String? {
        let listen = server.listen
        guard listen.port != 0, !listen.isWildcard else { return nil }
        return "http://\(listen)\(basePath.prefix)/"
    }

    /// The origins map tiles come from, for the Content Security Policy.
    package var tileOrigins: [String] {
        SecurityHeaders.origin(ofTemplate: tiles).map { [$0] } ?? []
    }
}
