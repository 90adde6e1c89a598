import GeotifyMQTT

extension MQTTMessage {
    /// The payload decoded as UTF-8 (invalid bytes become U+FFFD), for readable asserts.
    package var text: String {
        String(decoding: payload, as: UTF8.self)
    }
}
