import GeotifyHTTP
import Testing

@Suite struct BasePathTests {
    @Test func theSettingIsNormalised() throws {
        #expect(try BasePath("/geotify/").prefix == "/geotify")
        #expect(try BasePath("/").prefix == "")
        #expect(try BasePath("").prefix == "")
        #expect(throws: HTTPSettingsError.self) { try BasePath("geotify") }
        #expect(throws: HTTPSettingsError.self) { try BasePath("/a?b") }
    }

    @Test func thePrefixIsTakenOffAndTheBarePrefixRedirectsWithASlash() throws {
        let base = try BasePath("/geotify")
        #expect(base.resolve("/geotify/api/state") == .serve("/api/state"))
        #expect(base.resolve("/geotify/") == .serve("/"))
        #expect(base.resolve("/geotify") == .redirect("/geotify/"))
        #expect(base.resolve("/api/state") == .serve("/api/state"))
        #expect(base.resolve("/geotifyx/api") == .serve("/geotifyx/api"))
    }

    @Test func withoutAPrefixPathsAreServedAsTheyAre() {
        #expect(BasePath.none.resolve("/api/state") == .serve("/api/state"))
    }

    /// Every trailing slash is dropped (`/geotify//` is `/geotify`), and a prefix with a
    /// `#`, `?` or space, which a URL's path cannot hold as written, is refused.
    @Test func trailingSlashesGoAndAPrefixThatIsNoPlainPathIsRefused() throws {
        #expect(try BasePath("/geotify//").prefix == "/geotify")
        #expect(try BasePath("//").prefix == "")
        for text in ["/a#b", "/a b", "/a?b"] {
            #expect(throws: HTTPSettingsError.self, "\(text)") { try BasePath(text) }
        }
    }
}
