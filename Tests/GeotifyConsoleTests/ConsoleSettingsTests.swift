import GeotifyConsole
import GeotifyHTTP
import GeotifyJSON
import Testing

@Suite struct ConsoleSettingsTests {
    func parse(_ text: String) throws -> ConsoleSettings {
        let object = try #require(try JSONParser().parse(text).objectValue)
        return try ConsoleSettings(parsing: object, file: "/etc/geotify/geotify.json")
    }

    @Test func anEmptyObjectServesLoopbackWithoutLogins() throws {
        let settings = try parse("{}")
        #expect(settings.server.listen == ListenAddress(host: "127.0.0.1", port: 8091))
        #expect(settings.usersFile == nil)
        #expect(settings.tiles == ConsoleSettings.openStreetMapTiles)
        #expect(settings.tileOrigins == ["https://tile.openstreetmap.org"])
    }

    @Test func everyKeyIsRead() throws {
        let settings = try parse("""
            {"listen":"0.0.0.0:80","basePath":"/geotify/","users":"users","roles":{"alice":["manage","metrics"]},
             "tiles":"","tileAttribution":"x","leaflet":"/opt/leaflet","threads":4,"maximumConnections":100,
             "maximumBodyBytes":2048,"maximumHeaderBytes":8192,"headerTimeout":5,"idleTimeout":30,"recentNotifications":10}
            """)
        #expect(settings.server.listen.port == 80)
        #expect(settings.basePath.prefix == "/geotify")
        #expect(settings.usersFile == "/etc/geotify/users")
        #expect(settings.roles == ["alice": [.manage, .metrics]])
        #expect(settings.tileOrigins.isEmpty)
        #expect(settings.server.threads == 4)
        #expect(settings.server.limits.maximumBodyBytes == 2048)
        #expect(settings.server.headerTimeout == 5)
        #expect(settings.recentNotifications == 10)
    }

    @Test func listeningBeyondLoopbackWithoutUsersIsRefused() {
        #expect(throws: HTTPSettingsError.self) { try parse("{\"listen\":\"0.0.0.0:8091\"}") }
    }

    @Test func wrongKeysAndValuesAreRefusedNamingThem() {
        let cases = [
            ("{\"port\":1}", "unknown key \"http.port\""),
            ("{\"listen\":\"example.org:1\"}", "\"http.listen\""),
            ("{\"roles\":{\"a\":[\"admin\"]}}", "\"http.roles.a\""),
            ("{\"tiles\":\"ftp://x/{z}\"}", "\"http.tiles\""),
            ("{\"threads\":1.5}", "\"http.threads\" must be a whole number"),
            ("{\"users\":\"\"}", "\"http.users\" must not be empty"),
        ]
        for (text, expected) in cases {
            do {
                _ = try parse(text)
                Issue.record("accepted \(text)")
            } catch let error as HTTPSettingsError {
                #expect(error.message.contains(expected), "\(error.message)")
            } catch {
                Issue.record("unexpected \(error)")
            }
        }
    }

    @Test func listeningOnOneOutsideAddressWithoutUsersIsRefused() throws {
        #expect(throws: HTTPSettingsError.self) { try parse("{\"listen\":\"192.168.1.5:8091\"}") }
        #expect(try parse("{\"listen\":\"127.0.0.2:8091\"}").usersFile == nil)
    }
}
