import GeotifyCore
import GeotifyHTTP

/// A refusal from the bridge or the console's own reading of a request, with the error
/// code the MQTT replies and `geotify/error` use (`invalid_json`, `stale`,
/// `fence_limit`, ...) and a message for people.
package struct ConsoleRefusal: Error, Sendable, Equatable {
    package var code: ErrorCode
    package var message: String

    package init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The refusal answered over HTTP: its code's status (`ReplyStatus`) with the body an
    /// MQTT client would get for it.
    package var response: HTTPResponse {
        .refusal(status: ReplyStatus.status(for: code), domainCode: code, message)
    }
}
