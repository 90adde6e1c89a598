import GeotifyHTTP
import Testing

/// The `Host` rules on their own; `HTTPServerTests` sends them over a socket.
@Suite struct HostHeaderTests {
    /// Whether one `Host` line of `value` on an HTTP/1.1 request is refused `bad_host`.
    func refused(_ value: String) -> Bool {
        HostHeader.refusal(values: [value], version: "HTTP/1.1")?.refusalCode == .http(.badHost)
    }

    /// `Host` values that are not a `uri-host [ ":" port ]` (RFC 9112 §3.2), which
    /// `HTTPServerTests` sends over a socket too.
    static let invalid = [
        "", "local host", "local\thost", "localhost/x", "user@localhost", "local\u{01}host", "local\u{7f}host", "local\rhost",
        "h\u{e9}te", "::1", "[::1", "[::1]x", "[::g]", "[fe80::1%eth0]", ":8080", "localhost:80:80", "localhost:8o",
        "local%zzhost", "local[host]", "localhost?", "localhost#",
    ]

    /// A name, an IPv4 or bracketed IPv6 address or an `IPvFuture`, each with or without
    /// a port (and the spaces and tabs libmicrohttpd leaves after a value).
    static let valid = [
        "[::1]:8080", "localhost:8080", "localhost", "127.0.0.1:8091", "[::ffff:127.0.0.1]", "geotify.example.org",
        "localhost:", "local%2Dhost", "a-b_c~d!$&'()*+,;=", "[v1.fe80::a+en1]:80", "localhost \t",
    ]

    @Test func eachValueTheServerIsSentIsJudgedAlikeHere() {
        for value in Self.invalid {
            #expect(refused(value), "\(value.debugDescription)")
        }
        for value in Self.valid {
            #expect(!refused(value), "\(value.debugDescription)")
        }
    }

    /// A `%XX` escape is whole wherever it stands, also as the name's last three
    /// characters (`local%2D`), with or without a port; a `%` with fewer than two hex
    /// digits after it is not.
    @Test func anEscapeEndingTheNameIsWhole() {
        #expect(!refused("local%2D"))
        #expect(!refused("local%2D:8091"))
        #expect(refused("local%2"))
        #expect(refused("local%2:8091"))
    }

    /// An `IPvFuture` literal needs its version's hex digits and text after the dot:
    /// `[v.1]`, `[v1.]` and `[v1]` (no dot) are refused, `[v1.a]` is served, and so is
    /// `[v1.a.b]`: the version ends at the first dot, and the text may hold more.
    @Test func aFutureAddressNeedsAVersionAndAText() {
        #expect(refused("[v.1]"))
        #expect(refused("[v1.]:80"))
        #expect(refused("[v1]"), "no dot between the version and the text")
        #expect(refused("[vA:b]:80"))
        #expect(!refused("[v1.a]"))
        #expect(!refused("[v1.a.b]:80"))
    }

    /// Between the brackets only an IPv6 address as RFC 4291 writes it is served, not
    /// any text of hex digits, colons and dots.
    @Test func anAddressLiteralMustBeAnIPv6Address() {
        for value in ["[1:2]", "[12345::1]", "[1.2.3.4]", "[:::]", "[]", "[1::2::3]"] {
            #expect(refused(value), "\(value)")
        }
        #expect(!refused("[2001:db8::1]:443"))
    }

    /// A name may hold every unreserved character and sub-delimiter of RFC 3986's
    /// `reg-name`, and nothing else: not a space, `/`, `@`, `"` or a second `:`.
    @Test func aNameTakesUnreservedCharactersAndSubDelimiters() {
        #expect(!refused("Az09-._~!$&'()*+,;=:8091"))
        for value in ["a b", "a/b", "a@b", "a\"b", "a:1:2", "a:b", "a#", "a?"] {
            #expect(refused(value), "\(value)")
        }
    }

    /// Only HTTP/1.0 may leave `Host` out; a later HTTP/1 minor version (which
    /// libmicrohttpd answers as 1.1) needs it as 1.1 does.
    @Test func onlyHTTP10MayLeaveHostOut() {
        #expect(HostHeader.refusal(values: [], version: "HTTP/1.0") == nil)
        for version in ["HTTP/1.1", "HTTP/1.2"] {
            #expect(HostHeader.refusal(values: [], version: version)?.refusalCode == .http(.badHost), "\(version)")
        }
    }
}
