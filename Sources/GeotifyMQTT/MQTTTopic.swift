import CMosquitto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Checks of topic names and subscription filters before they reach libmosquitto, so a
/// bad one gets an error that says what is wrong with it.
enum MQTTTopic {
    /// The longest topic MQTT can carry: its length is a 16-bit field.
    static let maximumLength = 65_535

    /// Throws unless `topic` can be published to: not empty, no `+` or `#`, no NUL
    /// character, at most 65 535 UTF-8 bytes.
    static func checkName(_ topic: String, operation: @autoclosure () -> String) throws(MQTTError) {
        try checkCommon(topic, kind: "topic", operation: operation())
        // `withCString` lends the string's own bytes; passing `topic` as a C string
        // argument would copy it into a new array on every publish.
        guard topic.withCString(mosquitto_pub_topic_check) == MOSQ_ERR_SUCCESS.rawValue else {
            throw .invalid(operation(), "topic \"\(topic)\" must not contain the wildcards + or #")
        }
    }

    /// Throws unless `filter` is a valid subscription filter: not empty, `+` and `#`
    /// only as whole levels, `#` only last, no NUL character, at most 65 535 UTF-8 bytes.
    static func checkFilter(_ filter: String, operation: @autoclosure () -> String) throws(MQTTError) {
        try checkCommon(filter, kind: "filter", operation: operation())
        guard mosquitto_sub_topic_check(filter) == MOSQ_ERR_SUCCESS.rawValue else {
            throw .invalid(
                operation(),
                "filter \"\(filter)\" uses a wildcard wrongly: + and # must fill a whole level and # must be last"
            )
        }
    }

    private static func checkCommon(_ text: String, kind: String, operation: @autoclosure () -> String) throws(MQTTError) {
        guard !text.isEmpty else {
            throw .invalid(operation(), "the \(kind) is empty")
        }
        guard !hasNUL(text) else {
            throw .invalid(operation(), "the \(kind) \"\(text)\" contains a NUL character")
        }
        guard text.utf8.count <= maximumLength else {
            throw .invalid(operation(), "the \(kind) is \(text.utf8.count) bytes long; MQTT allows \(maximumLength)")
        }
    }

    /// Whether `text` holds a NUL byte: one `memchr` over the string's own UTF-8 (the
    /// UTF-8 view's `contains` stepped through it byte by byte, on every publish).
    static func hasNUL(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return false }
            return memchr(base, 0, bytes.count) != nil
        }
    }
}
