import GeotifyHTTP
import Testing

@Suite struct SecurityHeadersTests {
    @Test func theTileOriginIsTakenFromTheTemplate() {
        #expect(SecurityHeaders.origin(ofTemplate: "https://tile.openstreetmap.org/{z}/{x}/{y}.png") == "https://tile.openstreetmap.org")
        #expect(SecurityHeaders.origin(ofTemplate: "https://{s}.tile.example.org/{z}/{x}/{y}.png") == "https://*.tile.example.org")
        #expect(SecurityHeaders.origin(ofTemplate: "http://127.0.0.1:8080/tiles/{z}/{x}/{y}.png") == "http://127.0.0.1:8080")
        #expect(SecurityHeaders.origin(ofTemplate: "/tiles/{z}/{x}/{y}.png") == nil)
        #expect(SecurityHeaders.origin(ofTemplate: "https://a.org; script-src *") == nil)
    }

    @Test func thePolicyAllowsOnlyTheSiteAndTheTiles() {
        let fields = SecurityHeaders.fields(tileOrigins: ["https://tile.openstreetmap.org"])
        let policy = fields["Content-Security-Policy"] ?? ""
        #expect(policy.contains("script-src 'self';"))
        #expect(policy.contains("img-src 'self' data: https://tile.openstreetmap.org;"))
        #expect(policy.contains("frame-ancestors 'none'"))
        #expect(fields["X-Content-Type-Options"] == "nosniff")
        #expect(fields["X-Frame-Options"] == "DENY")
    }
}
