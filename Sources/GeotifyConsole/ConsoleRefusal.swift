/// A refusal from the bridge, with the same error code the MQTT replies and
/// `geotify/error` use (`invalid_json`, `stale`, `fence_limit`, ...) and a message for
/// people.
package struct ConsoleRefusal: Error, Sendable, Equatable {
    package var code: String
    package var message: String

    package init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }
}
