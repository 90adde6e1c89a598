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

    /// Beside the policy, each response says: send other sites only the origin as a
    /// referrer, open no window that shares the page's process with another site's, and
    /// store nothing (the answers hold positions); and the page connects only to its
    /// own site.
    @Test func theOtherFieldsKeepReferrersWindowsAndCachesToTheSite() {
        let fields = SecurityHeaders.fields(tileOrigins: [])
        #expect(fields["Referrer-Policy"] == "strict-origin-when-cross-origin")
        #expect(fields["Cross-Origin-Opener-Policy"] == "same-origin")
        #expect(fields["Cache-Control"] == "no-store")
        #expect(fields["Content-Security-Policy"]?.contains("connect-src 'self';") == true)
        #expect(fields["Content-Security-Policy"]?.contains("img-src 'self' data:;") == true)
    }

    /// A template whose host is not one origin is refused: a placeholder other than a
    /// leading `{s}.`, a comma (which would start a second policy in the header), no host
    /// at all.
    @Test func aTemplateWhoseHostIsNotOneOriginIsRefused() {
        for template in [
            "https://{a}.tile.example.org/{z}/{x}/{y}.png", "https://tile.{s}.example.org/{z}/{x}/{y}.png",
            "https://a.example.org,b.example.org/{z}/{x}/{y}.png", "https:///tiles/{z}/{x}/{y}.png", "https://",
        ] {
            #expect(SecurityHeaders.origin(ofTemplate: template) == nil, "\(template)")
        }
    }
}
