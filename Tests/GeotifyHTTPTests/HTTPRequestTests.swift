import GeotifyHTTP
import Testing

/// What a request makes of its own headers, apart from the server that reads it.
@Suite struct HTTPRequestTests {
    /// A body's media type is read without its parameters, in lower case and without the
    /// spaces around it, so `Application/JSON ; charset=utf-8` is `application/json` (media
    /// types are case-insensitive, RFC 9110 §8.3.1).
    @Test func theMediaTypeIsReadInLowerCaseWithoutParametersOrSpaces() {
        for value in ["Application/JSON ; charset=utf-8", "application/json", " APPLICATION/json\t", "application/json;charset=utf-8"] {
            #expect(HTTPRequest(method: "POST", path: "/", headers: ["Content-Type": value]).mediaType == "application/json", "\(value)")
        }
        #expect(HTTPRequest(method: "POST", path: "/").mediaType == nil)
    }
}
